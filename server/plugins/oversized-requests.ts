import { Server, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { apiLogSource, recordRefusedPacket } from '~~/server/utils/api-log/recorder'
import { newRequestId } from '~~/server/utils/api-log/request-id'

// A request whose line or headers are larger than Node's limit (16 KiB) never reaches the app:
// Node answers it 431 with no body. Here the server answers such requests as the app answers any
// other error: a request line longer than 8 KiB (a URL too long) is 414, larger headers are 431, each with the error body. The app's plugins run before its server is made and
// started, so the server is given this listener as it starts listening.

/** The URL of the request line in a packet (up to 16 KiB of it: the log keeps less). */
function packetUrl(packet: Buffer): string {
  const end = packet.indexOf('\r\n')
  const line = packet.subarray(0, end < 0 ? Math.min(packet.length, 16 * 1024) : end).toString('latin1')
  return line.split(' ')[1] ?? '/'
}

/** The complete header lines in a packet, by lower-case name (the line that overflowed is cut, and left out). */
function packetHeaders(packet: Buffer): Record<string, string> {
  const headers: Record<string, string> = {}
  const text = packet.toString('latin1')
  const lines = text.split('\r\n')
  // the first line is the request line; the last one is not ended (unless the packet ended with it)
  for (const line of lines.slice(1, -1)) {
    if (!line) break
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] ??= line.slice(colon + 1).trim()
  }
  return headers
}

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
  const line = /^([A-Z]+) (\/\S*)/.exec(head)
  const path = line?.[2]
  const body = apiErrorBody(statusCode, message, { code: statusCode === 414 ? 'uri_too_long' : 'headers_too_large' })
  const isPublic = path === undefined || isPublicApiPath(path)
  const isLogged = path !== undefined && apiLogSource(path) !== undefined
  const made = isPublic || isLogged ? newRequestId() : undefined
  const requestId = made?.id
  // the app never saw the request: its credential is read from the packet Node handed over, as
  // far as it came (a credential sent after what overflowed is not in it)
  if (made && line && error.rawPacket) {
    recordRefusedPacket({
      id: made.id, at: made.at, method: line[1]!, url: packetUrl(error.rawPacket), headers: packetHeaders(error.rawPacket),
      status: statusCode, errorCode: body.code, ip: socket.remoteAddress,
    })
  }
  const json = JSON.stringify(isPublic || isLogged ? { ...body, request_id: requestId } : { error: body.error, code: body.code })
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
