import { loadRealtimeColumns, RealtimeSocket, serializerOf, verifyRealtimeKey } from '~~/server/utils/changes/realtime'

// supabase-js's realtime socket (wss://<origin>/realtime/v1/websocket?apikey=<key>&vsn=2.0.0):
// the Phoenix frames are handled by server/utils/changes/realtime.ts. The socket is set up
// (its key verified) before any frame is handled: a frame that arrives meanwhile waits.
async function setUp(peer: { request?: { url?: string }, send: (frame: string) => unknown, close: (code?: number, reason?: string) => void }): Promise<RealtimeSocket> {
  const url = peer.request?.url ?? ''
  const token = new URL(url, 'http://localhost').searchParams.get('apikey') ?? ''
  await loadRealtimeColumns()
  const found = token ? await verifyRealtimeKey(token) : 'Send a team API key as the apikey parameter'
  return new RealtimeSocket(
    { send: frame => void peer.send(frame), close: (code, reason) => peer.close(code, reason) },
    serializerOf(url),
    typeof found === 'string' ? null : found,
    typeof found === 'string' ? found : null,
  )
}

const socketOf = (context: Record<string, unknown>) => context.realtime as Promise<RealtimeSocket> | undefined

export default defineWebSocketHandler({
  open(peer) {
    const ready = setUp(peer)
    ready.catch(error => console.error('[realtime] a socket could not be set up:', (error as Error).message))
    peer.context.realtime = ready
  },
  async message(peer, message) {
    const socket = await socketOf(peer.context)?.catch(() => undefined)
    if (!socket) return
    const bytes = message.uint8Array()
    // a text frame is JSON; a binary one (2.0.0 broadcast push) starts with its kind, a small number
    await socket.receive(bytes[0] !== undefined && bytes[0] < 32 ? bytes : message.text())
  },
  async close(peer) {
    (await socketOf(peer.context)?.catch(() => undefined))?.closed()
  },
  async error(peer) {
    (await socketOf(peer.context)?.catch(() => undefined))?.closed()
  },
})
