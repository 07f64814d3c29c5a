import type { H3Event } from 'h3'
import { isPublicApiPath, requireJsonContentType } from '../public-api/routes'
import { requestHeader } from './request'

// Request bodies above 1 MiB are refused: by their Content-Length before anything is read, and
// otherwise (chunked, or a Content-Length that lies) by counting the bytes as they arrive.
const maxBodyBytes = 1024 * 1024

const tooLarge = () => createError({ statusCode: 413, statusMessage: `The request body is larger than ${maxBodyBytes} bytes` })

/** Reads the request body up to the limit; the handlers' body readers then use this buffer. */
function readLimitedBody(event: H3Event): Promise<Buffer> {
  const request = event.node.req
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBodyBytes) {
        chunks.push(chunk)
        return
      }
      request.off('data', onData)
      // the rest of the body is drained and dropped, and the connection closes after the answer.
      // Not so under `nuxt dev`: there the request comes through the dev server's proxy, which
      // loses an answer sent while it is still sending the body (the client waited for the dev
      // server's request timeout, a 408, instead of this 413), so the answer waits for the body's end
      request.resume()
      if (import.meta.dev) {
        request.once('end', () => reject(tooLarge()))
        return
      }
      setResponseHeader(event, 'connection', 'close')
      reject(tooLarge())
    }
    request.on('data', onData)
    request.once('end', () => size <= maxBodyBytes && resolve(Buffer.concat(chunks)))
    request.once('error', reject)
  })
}

/** The methods whose requests carry a body here; h3's body readers refuse the others. */
const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * Reads a request's body within the limit (413 past it), for every route: the session routes'
 * middleware and the public API's own dispatch (server/plugins/public-api-dispatch.ts) call it.
 */
export async function limitRequestBody(event: H3Event): Promise<void> {
  // Only a request from the network has a stream to read. A request the server makes to itself
  // (the page renderer fetching /api/_auth/session or rendering its error page) copies the
  // page request's headers, Content-Length included, onto a GET whose stream never ends:
  // waiting for its body left a page request with a body unanswered forever.
  if (!bodyMethods.has(event.method) || '__unenv__' in event.node.req) return
  const length = requestHeader(event, 'content-length')
  if (Number(length ?? 0) > maxBodyBytes) throw tooLarge()
  const chunked = /\bchunked\b/i.test(requestHeader(event, 'transfer-encoding') ?? '')
  if (!chunked && !Number(length)) return
  // the public API's and the session routes' bodies are JSON (the sign-in form the browser posts
  // itself goes to /auth/sign-in, and OAuth's forms to /oauth/…: neither is under /api)
  if (isPublicApiPath(event.path)) requireJsonContentType(event)
  else if (event.path.startsWith('/api/')) requireJsonContentType(event, 'unsupported_media_type')
  // h3's readBody/readRawBody take a body already read from here
  // (Buffer.concat allocates a plain ArrayBuffer, never a shared one)
  event._requestBody = await readLimitedBody(event) as Uint8Array<ArrayBuffer>
}
