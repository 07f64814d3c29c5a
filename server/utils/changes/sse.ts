// Server-Sent Events of the change feed: `id:` the event id, `event:` its type, `data:` the event
// JSON; a comment every heartbeat so that proxies and clients know the stream is alive. The
// key's stream (GET /api/v1/events/stream) and the member's (GET /api/teams/{teamId}/events/stream)
// both go through openEventStream.
import type { H3Event } from 'h3'
import type { ChangeEvent } from '#shared/types/changes'
import { follow, type Following } from './hub'
import { feedStart, isEventId, type StoredEvent } from './feed'
import { endOnShutdown } from '../shutdown'
import { logger, requestLogFields } from '../log/logger'

const log = logger('changes')

/** The interval of the heartbeat comment (CHANGES_HEARTBEAT_MS shortens it, for tests). */
export const defaultHeartbeatMs = 15_000
/** A client that leaves this much unread is too slow: its stream ends, and it resumes with Last-Event-ID. */
const maxBufferedBytes = 4 * 1024 * 1024

export function heartbeatMs(): number {
  return Number(process.env.CHANGES_HEARTBEAT_MS) || defaultHeartbeatMs
}

/**
 * One event as an SSE message; `typed`: with `event:` its type (an EventSource then hands it to
 * listeners of that type), else a plain message (onmessage gets every one).
 */
export function sseMessage(event: ChangeEvent, typed = true): string {
  let json = serialized.get(event)
  if (json === undefined) serialized.set(event, json = JSON.stringify(event))
  return `id: ${event.id}\n${typed ? `event: ${event.type}\n` : ''}data: ${json}\n\n`
}

/** Each event's JSON, made once for all the streams it goes to (the hub hands them the same object). */
const serialized = new WeakMap<ChangeEvent, string>()

/**
 * Where a stream starts: `Last-Event-ID` (a reconnecting EventSource sends it) before `after`,
 * null (from now on) without either; 400 for a malformed id.
 */
export function streamStart(event: H3Event, after: string | undefined): string | null {
  const header = getRequestHeader(event, 'last-event-id')?.trim()
  const start = header || after
  if (start === undefined || start === '') return null
  if (start === '0') return feedStart
  if (!isEventId(start)) throw createError({ statusCode: 400, statusMessage: 'after / Last-Event-ID: not an event id of this feed (32 hexadecimal characters, or 0 for the oldest)' })
  return start
}

export interface StreamOptions {
  teamId: string
  after: string | null
  tables: () => string[]
  types?: string[]
  accepts: (stored: StoredEvent) => boolean
  /** Send `event:` lines (the key's stream); the browser's stream sends plain messages. */
  typed?: boolean
  /** Called once the stream is open, with how to end it (e.g. when its key is revoked). */
  onOpen?: (end: (reason: string) => void) => void
  onClose?: () => void
}

/**
 * Answers the request with an event stream: replays what came after `after`, then follows the
 * team live until the client leaves or `end` is called. Resolves when the stream has ended.
 */
export async function openEventStream(event: H3Event, options: StreamOptions): Promise<void> {
  const res = event.node.res
  const req = event.node.req
  let following: Following | undefined
  const timers: { heartbeat?: ReturnType<typeof setInterval> } = {}
  let isEnded = false
  let resolveEnded: () => void = () => {}
  const ended = new Promise<void>(resolve => (resolveEnded = resolve))
  let forget = () => {}
  const end = (reason?: string) => {
    if (isEnded) return
    isEnded = true
    forget()
    clearInterval(timers.heartbeat)
    following?.stop()
    options.onClose?.()
    if (!res.writableEnded) {
      if (reason) res.write(`: ${reason.replace(/\n/g, ' ')}\n\n`)
      res.end()
    }
    resolveEnded()
  }
  let isCorked = false
  const write = (text: string) => {
    if (isEnded) return
    // what one hub read hands out in the same tick goes to the socket in one write
    if (!isCorked) {
      isCorked = true
      res.cork()
      process.nextTick(() => {
        isCorked = false
        res.uncork()
      })
    }
    res.write(text)
    if (res.writableLength > maxBufferedBytes) end('The client reads too slowly; resume with Last-Event-ID')
  }
  // the headers go out with the first write, after the stream's start is fixed: a client that
  // sees the stream open (EventSource's open event) may reload what it shows, and miss nothing
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'connection': 'keep-alive',
    'x-accel-buffering': 'no',
  })
  req.on('close', () => end())
  res.on('error', () => end())
  options.onOpen?.(reason => end(reason))
  // a stopping server ends its streams: the client reconnects with Last-Event-ID and misses nothing
  forget = endOnShutdown(() => end('The server is stopping; reconnect with Last-Event-ID'))
  // what the replay hands out while the stream starts waits for the preamble (`retry:` and the
  // opening comment), which goes first once the start is fixed
  let waiting: string[] | undefined = []
  try {
    following = await follow({
      teamId: options.teamId,
      after: options.after,
      tables: options.tables,
      types: options.types,
      accepts: options.accepts,
      send: (stored) => {
        const message = sseMessage(stored.event, options.typed ?? true)
        if (waiting) waiting.push(message)
        else write(message)
      },
    })
  }
  catch (error) {
    log.error('A stream could not start', { ...requestLogFields(event), error })
    end('The stream could not start; try again')
    return ended
  }
  if (isEnded) {
    following.stop()
    return ended
  }
  write(`retry: 1000\n: connected\n\n`)
  for (const message of waiting) write(message)
  waiting = undefined
  timers.heartbeat = setInterval(() => write(': heartbeat\n\n'), heartbeatMs())
  return ended
}
