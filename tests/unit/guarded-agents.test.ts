import type { LookupAddress } from 'node:dns'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { waitFor } from '../support/wait'
import { guardedAgents, isPrivateAddress, type GuardOptions } from '../../server/utils/http/url-guard'

// The webhook sender's agents keep one connection per receiver alive, and every connection they open
// is looked up through the SSRF guard. The receiver listens on 127.0.0.1, which this test's guard
// takes as the receiver's public address; the guard's own rule refuses everything else private.
const receiverAddress = '127.0.0.1'
const isRefused = (address: string) => address !== receiverAddress && isPrivateAddress(address)

let server: Server | undefined
afterEach(() => new Promise<void>((done) => {
  if (!server) return done()
  server.closeAllConnections()
  server.close(() => done())
}))

async function startReceiver() {
  const connections: Socket[] = []
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.end('ok'))
  })
  server.on('connection', socket => connections.push(socket))
  await new Promise<void>(done => server!.listen(0, receiverAddress, () => done()))
  return { port: (server.address() as AddressInfo).port, connections }
}

/** A resolver for `hooks.example.com` that answers what `answer` currently holds, counting its look-ups. */
function fakeDns(answer: { address: string }) {
  const lookups: string[] = []
  const resolve = ((hostname: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
    lookups.push(hostname)
    callback(null, [{ address: answer.address, family: 4 }])
  }) as unknown as NonNullable<GuardOptions['resolve']>
  return { resolve, lookups }
}

function send(port: number, agent: ReturnType<typeof guardedAgents>['http']): Promise<{ status?: number, error?: NodeJS.ErrnoException }> {
  return new Promise((done) => {
    const req = request({ host: 'hooks.example.com', port, path: '/hook', method: 'POST', agent }, (res) => {
      res.resume()
      res.on('end', () => done({ status: res.statusCode }))
    })
    req.on('error', error => done({ error }))
    req.end('{}')
  })
}

describe('guardedAgents', () => {
  it('reuses one connection per receiver, with one look-up', async () => {
    const { port, connections } = await startReceiver()
    const dns = fakeDns({ address: receiverAddress })
    const agents = guardedAgents(false, { ...dns, isRefused })
    for (let i = 0; i < 3; i++) expect((await send(port, agents.http)).status).toBe(200)
    expect(connections).toHaveLength(1)
    expect(dns.lookups).toEqual(['hooks.example.com'])
    agents.http.destroy()
  })

  it('refuses a kept connection\'s successor when the name now resolves to a private address', async () => {
    const { port, connections } = await startReceiver()
    const answer = { address: receiverAddress }
    const dns = fakeDns(answer)
    const agents = guardedAgents(false, { ...dns, isRefused })
    expect((await send(port, agents.http)).status).toBe(200)
    // the name moves onto the cloud metadata address, and the kept connection ends
    answer.address = '169.254.169.254'
    connections[0]!.destroy()
    await waitFor('the agent to drop the closed connection', () => Object.keys(agents.http.freeSockets).length === 0)
    const refused = await send(port, agents.http)
    expect(refused.error?.code).toBe('EPRIVATEADDRESS')
    expect(refused.error?.message).toBe('hooks.example.com resolves to a private address (169.254.169.254)')
    expect(dns.lookups).toHaveLength(2)
    expect(connections).toHaveLength(1)
    agents.http.destroy()
  })

  it('lets private answers through when private networks are allowed', async () => {
    const { port } = await startReceiver()
    const agents = guardedAgents(true, fakeDns({ address: receiverAddress }))
    expect((await send(port, agents.http)).status).toBe(200)
    agents.http.destroy()
  })
})
