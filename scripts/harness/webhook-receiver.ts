import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import type { TestApp } from './app'
import { createTeam, signUp, type Client } from './http'

export interface ReceivedWebhook {
  id: string
  timestamp: string
  signature: string
  body: string
  /** The parsed body; set only when the signature verified with the secret. */
  payload: { type: string, timestamp: string, data: Record<string, any> } | null
  verifyError: string | null
  receivedAt: number
  /** The sender's port on 127.0.0.1, which names the process that sent it. */
  remotePort: number
}

type ReceiverAnswer = number | { status: number, body: string } | 'hang'

/**
 * What the receiver answers to the n-th request (0-based): a status code, a status and body, or
 * 'hang' to never answer; or a promise of one, to answer when the test lets it.
 */
export type ReceiverBehaviour = (index: number, request: IncomingMessage) => ReceiverAnswer | Promise<ReceiverAnswer>

export interface WebhookReceiver {
  /** e.g. http://127.0.0.1:41234/hook */
  url: string
  received: ReceivedWebhook[]
  /** The secret deliveries are verified with (the team's, read through the API). */
  secret: string
  behaviour: ReceiverBehaviour
  /** The most requests that were open at one time. */
  maxInFlight: number
  /** Resolves once `count` requests have arrived (or rejects after timeoutMs). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>
  close(): Promise<void>
}

/**
 * A real HTTP receiver on 127.0.0.1 that verifies every delivery with the `standardwebhooks` library,
 * as a team's integration would.
 */
export async function startWebhookReceiver(behaviour: ReceiverBehaviour = () => 200, options: { delayMs?: number } = {}): Promise<WebhookReceiver> {
  const hanging: ServerResponse[] = []
  let inFlight = 0
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    secret: '',
    behaviour,
    maxInFlight: 0,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      while (receiver.received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} webhook request(s), got ${receiver.received.length} within ${timeoutMs} ms`)
        await new Promise(r => setTimeout(r, 50))
      }
      return receiver.received
    },
    close: () => new Promise<void>((resolve) => {
      for (const response of hanging) response.destroy()
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
  const server = createServer((request, response) => {
    inFlight++
    receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight)
    response.on('close', () => inFlight--)
    const chunks: Buffer[] = []
    request.on('data', chunk => chunks.push(chunk))
    request.on('end', async () => {
      if (options.delayMs) await new Promise(r => setTimeout(r, options.delayMs))
      const body = Buffer.concat(chunks).toString('utf8')
      const headers = {
        'webhook-id': String(request.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
      }
      let payload: ReceivedWebhook['payload'] = null
      let verifyError: string | null = null
      try {
        payload = new Webhook(receiver.secret).verify(body, headers) as ReceivedWebhook['payload']
      }
      catch (error) {
        verifyError = (error as Error).message
      }
      const index = receiver.received.length
      receiver.received.push({
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        payload,
        verifyError,
        receivedAt: Date.now(),
        remotePort: request.socket.remotePort ?? 0,
      })
      const answer = await receiver.behaviour(index, request)
      if (answer === 'hang') {
        hanging.push(response)
        return
      }
      if (typeof answer === 'object') {
        response.statusCode = answer.status
        response.end(answer.body)
        return
      }
      response.statusCode = answer
      response.end(answer >= 200 && answer < 300 ? 'ok' : 'no')
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return receiver
}

/** A new user's own team and the secret its webhooks are signed with (read through the API, as an integration would). */
export async function teamWithSecret(app: Pick<TestApp, 'url'>, names: { owner: string, team: string }): Promise<{ owner: Client, teamId: string, secret: string }> {
  const owner = await signUp(app, { name: names.owner })
  const teamId = await createTeam(owner, names.team)
  const secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret as string
  return { owner, teamId, secret }
}
