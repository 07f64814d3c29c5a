import type { H3Event } from 'h3'

/**
 * A request header's value (name in lowercase), several of the same name joined by ", " as h3's
 * getRequestHeader does, without copying every header of the request first, as that does on each call.
 */
export function requestHeader(event: H3Event, name: string): string | undefined {
  const value = event.node.req.headers[name]
  return Array.isArray(value) ? value.filter(Boolean).join(', ') : value
}
