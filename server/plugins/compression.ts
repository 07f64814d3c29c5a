import type { H3Event } from 'h3'

// Compresses the API's JSON answers when the client accepts it. Only plain values a handler
// returned are touched: streams (the chat's event stream, exports) and web Responses go out as
// they are, so that they keep flushing as they are written. The built client's files are
// compressed once at build time instead (compressPublicAssets in nuxt.config.ts).

function isPlainJsonBody(body: unknown): body is Record<string, unknown> | unknown[] {
  if (body === null || typeof body !== 'object') return false
  if (Array.isArray(body)) return true
  const prototype = Object.getPrototypeOf(body)
  return prototype === Object.prototype || prototype === null
}

/** Whether the answer is JSON: a plain value the handler returned, or a string sent as JSON. */
function isJsonAnswer(event: H3Event, body: unknown): boolean {
  const contentType = String(getResponseHeader(event, 'content-type') ?? '')
  if (contentType && !contentType.includes('json')) return false
  return typeof body === 'string' ? contentType !== '' : isPlainJsonBody(body)
}

export default defineNitroPlugin((nitroApp) => {
  nitroApp.hooks.hook('beforeResponse', async (event, response) => {
    if (!event.path.startsWith('/api/') || event.handled || event.method === 'HEAD') return
    if (getResponseHeader(event, 'content-encoding')) return
    if (!isJsonAnswer(event, response.body)) return
    appendResponseHeader(event, 'vary', 'accept-encoding')
    const coding = negotiateEncoding(getRequestHeader(event, 'accept-encoding'))
    // serialised here only when it may be compressed; otherwise h3 serialises it once, as usual
    if (!coding) return
    const text = typeof response.body === 'string' ? response.body : JSON.stringify(response.body)
    if (Buffer.byteLength(text) < minCompressBytes) return
    response.body = await compressBody(text, coding)
    if (!getResponseHeader(event, 'content-type')) setResponseHeader(event, 'content-type', 'application/json')
    setResponseHeader(event, 'content-encoding', coding)
  })
})
