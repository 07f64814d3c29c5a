import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { H3Event } from 'h3'
import { requestHeader } from './request'

export type ContentCoding = 'br' | 'gzip'

/** Bodies smaller than this are sent as they are: compressing them saves less than it costs. */
export const minCompressBytes = 1024

const brotli = promisify(brotliCompress)
const gzipAsync = promisify(gzip)

/**
 * The coding to answer with for an Accept-Encoding header: brotli, else gzip, else none.
 * A coding with `q=0` is refused; `*` accepts both.
 */
export function negotiateEncoding(acceptEncoding: string | undefined): ContentCoding | null {
  if (!acceptEncoding) return null
  const accepted = new Map<string, number>()
  for (const part of acceptEncoding.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';')
    const q = params.map(p => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean)
    if (name) accepted.set(name.trim(), q === undefined ? 1 : Number(q))
  }
  const quality = (coding: ContentCoding) => accepted.get(coding) ?? accepted.get('*') ?? 0
  if (quality('br') > 0) return 'br'
  if (quality('gzip') > 0) return 'gzip'
  return null
}

/** Compresses a body with a coding; brotli at a middle quality, since answers are compressed per request. */
export function compressBody(body: string | Buffer, coding: ContentCoding): Promise<Buffer> {
  if (coding === 'br') {
    return brotli(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 5,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(body),
      },
    })
  }
  return gzipAsync(body, { level: 6 })
}

// The API's JSON answers and the server-rendered pages are compressed when the client accepts it.
// Only plain values a handler returned are touched: streams (the chat's event stream, exports) and
// web Responses go out as they are, so that they keep flushing as they are written. The built
// client's files are compressed once at build time instead (compressPublicAssets in nuxt.config.ts).

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

/**
 * Compresses an API route's JSON answer before it is sent (brotli or gzip, as Accept-Encoding
 * allows; `Vary: Accept-Encoding` on every JSON answer), replacing `response.body`.
 */
export async function compressJsonAnswer(event: H3Event, response: { body?: unknown }): Promise<void> {
  if (!event.path.startsWith('/api/') || event.handled || event.method === 'HEAD') return
  if (getResponseHeader(event, 'content-encoding')) return
  if (!isJsonAnswer(event, response.body)) return
  appendResponseHeader(event, 'vary', 'accept-encoding')
  const coding = negotiateEncoding(requestHeader(event, 'accept-encoding'))
  // serialised here only when it may be compressed; otherwise h3 serialises it once, as usual
  if (!coding) return
  const text = typeof response.body === 'string' ? response.body : JSON.stringify(response.body)
  if (Buffer.byteLength(text) < minCompressBytes) return
  response.body = await compressBody(text, coding)
  if (!getResponseHeader(event, 'content-type')) setResponseHeader(event, 'content-type', 'application/json')
  setResponseHeader(event, 'content-encoding', coding)
}

/**
 * Compresses a server-rendered page (HTML, with the page's data inline: tens of kilobytes, about a
 * fifth of that compressed) before it is sent, as compressJsonAnswer does for the API's JSON: on
 * a phone's connection the page's own bytes come before its first paint.
 */
export async function compressPageAnswer(event: H3Event, response: { body?: unknown }): Promise<void> {
  if (event.path.startsWith('/api/') || event.handled || event.method !== 'GET') return
  if (getResponseHeader(event, 'content-encoding')) return
  if (typeof response.body !== 'string' || !String(getResponseHeader(event, 'content-type') ?? '').startsWith('text/html')) return
  appendResponseHeader(event, 'vary', 'accept-encoding')
  const coding = negotiateEncoding(requestHeader(event, 'accept-encoding'))
  if (!coding || Buffer.byteLength(response.body) < minCompressBytes) return
  response.body = await compressBody(response.body, coding)
  setResponseHeader(event, 'content-encoding', coding)
}
