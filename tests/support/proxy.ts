import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RoundRobinProxy {
  /** e.g. http://127.0.0.1:41234 */
  url: string
  /** Which upstream (its index) served each request, in order. */
  served: number[]
  close(): Promise<void>
}

/**
 * An HTTP reverse proxy on 127.0.0.1 that sends each request to the next upstream in turn (per
 * request, not per connection, so a client's keep-alive connection still alternates), and tells
 * which one answered in an `x-upstream` header.
 */
export async function startRoundRobinProxy(upstreams: string[]): Promise<RoundRobinProxy> {
  let next = 0
  const served: number[] = []
  const server = createServer((request, response) => {
    const index = next++ % upstreams.length
    served.push(index)
    const target = new URL(request.url ?? '/', upstreams[index])
    const forward = httpRequest(target, { method: request.method, headers: { ...request.headers, host: target.host }, agent: false }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'x-upstream': String(index) })
      answer.pipe(response)
    })
    forward.on('error', (error) => {
      response.writeHead(502, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: `proxy: ${error.message}` }))
    })
    request.pipe(forward)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
