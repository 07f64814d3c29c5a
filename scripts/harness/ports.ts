// Ports for the processes the tests and the benchmarks start.
import { createServer } from 'node:net'

/** Whether a TCP port on 127.0.0.1 can be listened on now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const server = createServer()
    server.unref()
    server.once('error', () => answer(false))
    server.listen(port, '127.0.0.1', () => server.close(() => answer(true)))
  })
}

/**
 * A free TCP port on 127.0.0.1 for another process to listen on: a random one below the kernel's
 * ephemeral range (32768 and up, see /proc/sys/net/ipv4/ip_local_port_range), which the kernel
 * hands to outgoing connections and to `listen(0)`. A port from that range could be taken by any
 * connection (the browser's, a test's fetch) between this answer and the process's listen; CI
 * once lost a run so ("listen EADDRINUSE" from an app's embedded database socket).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (await canListen(port)) return port
  }
  throw new Error('No free port between 20000 and 32000 on 127.0.0.1')
}
