import { createServer, connect, type AddressInfo, type Socket } from 'node:net'

export interface StallingProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number
  /** Stops passing bytes either way (connections stay open, as with a database that hangs). */
  stall(): void
  /** Passes bytes again, what was held first. */
  resume(): void
  close(): Promise<void>
}

/**
 * A TCP proxy on 127.0.0.1 to `target` (host:port) that can hold every byte in both directions,
 * so that a client of it (a database connection) waits as on a database that stopped answering;
 * with `answerDelayMs`, every answer reaches the client that much later (a distant database).
 */
export async function startStallingProxy(targetHost: string, targetPort: number, options: { answerDelayMs?: number } = {}): Promise<StallingProxy> {
  let isStalled = false
  const pairs = new Set<[Socket, Socket]>()
  const server = createServer((client) => {
    const upstream = connect(targetPort, targetHost)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    client.pipe(upstream)
    if (options.answerDelayMs) {
      // in order: timers of one delay fire in the order they were set
      upstream.on('data', (chunk: Buffer) => setTimeout(() => client.write(chunk), options.answerDelayMs))
    }
    else {
      upstream.pipe(client)
    }
    if (isStalled) {
      client.pause()
      upstream.pause()
    }
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()))
  return {
    port: (server.address() as AddressInfo).port,
    stall() {
      isStalled = true
      for (const [client, upstream] of pairs) {
        client.pause()
        upstream.pause()
      }
    },
    resume() {
      isStalled = false
      for (const [client, upstream] of pairs) {
        client.resume()
        upstream.resume()
      }
    },
    close: () => new Promise<void>((resolve) => {
      for (const [client, upstream] of pairs) {
        client.destroy()
        upstream.destroy()
      }
      server.close(() => resolve())
    }),
  }
}
