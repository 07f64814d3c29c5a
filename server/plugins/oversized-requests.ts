import { Server, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { newRequestId } from '~~/server/utils/api-log/request-id'

// A request whose line or headers are larger than Node's limit (16 KiB) never reaches the app:
// Node answers it 431 with no body. Here the server answers such requests as the app answers any
// other error: a request line longer than 8 KiB (a URL too long) is 414, larger headers are 431, each with the error body. The app's plugins run before its server is made and
// started, so the server is given this listener as it starts listening.

/** The answer to a request Node refused before the app saw it. */
function answerClientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) {
  if (!socket.writable || error.code !== 'HPE_HEADER_OVERFLOW') {
    socket.destroy()
    return
  }
  const head = error.rawPacket?.subarray(0, 200).toString('latin1') ?? ''
  // the request line is the first line of the packet: one longer than 8 KiB (or not ended within it) is the URL
  const lineEnd = error.rawPacket?.indexOf('\r\n') ?? -1
  const statusCode = lineEnd < 0 || lineEnd > 8 * 1024 ? 414 : 431
  const message = statusCode === 414
    ? 'The URL is longer than this server accepts (16 KiB): send fewer or shorter query parameters, e.g. split a long in.(…) list over several requests'
    : 'The request headers are larger than this server accepts (16 KiB)'
  // the path when the packet starts with the request line; the public API's body when unknown
  const path = /^[A-Z]+ (\/\S*)/.exec(head)?.[1]
  const body = apiErrorBody(statusCode, message, { code: statusCode === 414 ? 'uri_too_long' : 'headers_too_large' })
  // the credential is unread, so the request is in no team's log; it still has its id
  const isPublic = path === undefined || isPublicApiPath(path)
  const requestId = isPublic ? newRequestId().id : undefined
  const json = JSON.stringify(isPublic ? { ...body, request_id: requestId } : { error: body.error, code: body.code })
  const idHeader = requestId ? `Request-Id: ${requestId}\r\n` : ''
  socket.end(`HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: application/json\r\n${idHeader}Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`)
}

export default defineNitroPlugin(() => {
  const listen = Server.prototype.listen
  if ((listen as { answersClientErrors?: boolean }).answersClientErrors) return
  const patched = function (this: Server, ...args: Parameters<Server['listen']>) {
    if (!this.listenerCount('clientError')) this.on('clientError', answerClientError)
    return listen.apply(this, args)
  } as Server['listen'] & { answersClientErrors?: boolean }
  patched.answersClientErrors = true
  Server.prototype.listen = patched
})
