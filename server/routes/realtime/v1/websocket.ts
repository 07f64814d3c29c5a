import { loadRealtimeColumns, RealtimeSocket, serializerOf, verifyRealtimeKey, type RealtimeKeyCheck } from '~~/server/utils/changes/realtime'
import { recordSocketOpening } from '~~/server/utils/api-log/recorder'
import { newRequestId } from '~~/server/utils/api-log/request-id'
import { endOnShutdown } from '~~/server/utils/shutdown'

/** The request id a socket's upgrade answered with (in its Request-Id header), kept for its log entry. */
interface Opening {
  id: string
  at: number
  started: number
}

// supabase-js's realtime socket (wss://<origin>/realtime/v1/websocket?apikey=<key>&vsn=2.0.0):
// the Phoenix frames are handled by server/utils/changes/realtime.ts. The socket is set up
// (its key verified) before any frame is handled: a frame that arrives meanwhile waits.
async function setUp(peer: Peer): Promise<RealtimeSocket> {
  const url = peer.request?.url ?? ''
  const token = new URL(url, 'http://localhost').searchParams.get('apikey') ?? ''
  await loadRealtimeColumns()
  const found: RealtimeKeyCheck = token ? await verifyRealtimeKey(token) : { refusal: 'Send a team API key as the apikey parameter' }
  const opening = peer.context.opening as Opening | undefined
  if (opening) {
    recordSocketOpening({
      ...opening,
      url: url.startsWith('http') ? new URL(url).pathname + new URL(url).search : url,
      headers: new Headers(peer.request?.headers as HeadersInit | undefined),
      ip: peer.remoteAddress,
      credential: found.known ? { teamId: found.known.team_id, apiKeyId: found.known.id } : undefined,
      refusal: found.key ? undefined : found.refusal,
    })
  }
  return new RealtimeSocket(
    { send: frame => void peer.send(frame), close: (code, reason) => peer.close(code, reason) },
    serializerOf(url),
    found.key ?? null,
    found.key ? null : found.refusal ?? 'Unknown API key',
  )
}

const socketOf = (context: Record<string, unknown>) => context.realtime as Promise<RealtimeSocket> | undefined

type Peer = Parameters<NonNullable<Parameters<typeof defineWebSocketHandler>[0]['open']>>[0]

/** The socket closed or failed: no longer one to end on shutdown, and its channels are left. */
async function closed(peer: Peer) {
  (peer.context.forget as (() => void) | undefined)?.()
  const socket = await socketOf(peer.context)?.catch(() => undefined)
  socket?.closed()
}

export default defineWebSocketHandler({
  // the socket's answer carries its Request-Id, as every answer of the API does
  upgrade(request) {
    const { id, at } = newRequestId()
    if (request.context) request.context.opening = { id, at, started: performance.now() } satisfies Opening
    return { headers: { 'request-id': id } }
  },
  open(peer) {
    // a stopping server closes its sockets ("going away"): the client reconnects and joins again
    peer.context.forget = endOnShutdown(() => peer.close(1001, 'The server is stopping'))
    const ready = setUp(peer)
    ready.catch(error => logger('realtime').error('A socket could not be set up', { error }))
    peer.context.realtime = ready
  },
  async message(peer, message) {
    const socket = await socketOf(peer.context)?.catch(() => undefined)
    if (!socket) return
    const bytes = message.uint8Array()
    // a text frame is JSON; a binary one (2.0.0 broadcast push) starts with its kind, a small number
    await socket.receive(bytes[0] !== undefined && bytes[0] < 32 ? bytes : message.text())
  },
  close: closed,
  error: closed,
})
