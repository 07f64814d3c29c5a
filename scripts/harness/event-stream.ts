import { EventSource } from 'eventsource'

/** One message as EventSource hands it to a listener. */
export interface StreamMessage {
  id: string
  type: string
  data: any
}

/**
 * A change-feed stream read as a browser's EventSource reads it (the WHATWG implementation of the
 * `eventsource` package): it parses the frames, remembers the last id and sends it as
 * Last-Event-ID when it reconnects. `comments` counts the heartbeat comments seen on the wire.
 */
export interface OpenStream {
  source: EventSource
  messages: StreamMessage[]
  /** The stream's raw text so far (to see comments, which EventSource does not surface). */
  raw: () => string
  /** Whether the server ended the stream (EventSource then reconnects unless closed). */
  errors: number
  close(): void
}

/**
 * Opens `url` with the key as a bearer token. Every event type of `types` is listened to (an SSE
 * `event:` other than message reaches only listeners of its name, as in a browser).
 */
export function openEventStream(url: string, key: string, types: string[], extraHeaders: Record<string, string> = {}): OpenStream {
  let raw = ''
  const source = new EventSource(url, {
    fetch: async (input, init) => {
      const response = await fetch(input, { ...init, headers: { ...init.headers, authorization: `Bearer ${key}`, ...extraHeaders } })
      if (!response.body) return response
      // tee the body: EventSource parses one copy, the test reads the other for comments
      const [forSource, forTest] = response.body.tee()
      void (async () => {
        const decoder = new TextDecoder()
        try {
          for await (const chunk of forTest as unknown as AsyncIterable<Uint8Array>) raw += decoder.decode(chunk, { stream: true })
        }
        catch {
          // the stream was closed
        }
      })()
      return new Response(forSource, { status: response.status, statusText: response.statusText, headers: response.headers })
    },
  })
  const stream: OpenStream = {
    source,
    messages: [],
    raw: () => raw,
    errors: 0,
    close: () => source.close(),
  }
  for (const type of types) {
    source.addEventListener(type, (message) => {
      stream.messages.push({ id: message.lastEventId, type: message.type, data: JSON.parse(message.data) })
    })
  }
  source.addEventListener('error', () => {
    stream.errors++
  })
  return stream
}
