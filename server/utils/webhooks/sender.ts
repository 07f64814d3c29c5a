// One delivery's POST: kept connections per receiver, the SSRF guard on every connection, a timeout.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { urlToHttpOptions } from 'node:url'
import { guardedAgents, isPrivateLiteral, type GuardedAgents } from '../http/url-guard'
import type { ClaimedDelivery } from './claims'
import type { WebhookSettings } from './delivery-settings'
import { keptByText, signedHeaders } from './signing'

export interface AttemptOutcome {
  statusCode: number | null
  responseBody: string | null
  error: string | null
  durationMs: number
}

/** How much of each answer an attempt keeps. */
const responseBodyLimit = 4096

interface PostAnswer {
  statusCode: number
  body: string
}

/** The first bytes of an answer as text Postgres can store (no NUL). */
function answerText(chunks: Buffer[]): string {
  return Buffer.concat(chunks).subarray(0, responseBodyLimit).toString('utf8').replaceAll('\u0000', '')
}

let senderAgents: { allowPrivate: boolean, agents: GuardedAgents } | undefined

/** The sender's keep-alive agents (connections reused per receiver, each new one checked by the SSRF guard). */
function agentsFor(settings: WebhookSettings): GuardedAgents {
  if (senderAgents?.allowPrivate !== settings.allowPrivateNetworks) {
    senderAgents = { allowPrivate: settings.allowPrivateNetworks, agents: guardedAgents(settings.allowPrivateNetworks) }
  }
  return senderAgents.agents
}

/** Closes the kept connections (the worker stopped). */
export function closeSenderAgents(): void {
  senderAgents?.agents.http.destroy()
  senderAgents?.agents.https.destroy()
  senderAgents = undefined
}

/**
 * One POST: no redirects followed, an overall timeout, sent on a kept connection to the receiver
 * when there is one, and the SSRF guard on the address of every connection it opens. A kept
 * connection that the receiver closed just as it was reused (ECONNRESET before any answer) is
 * retried once on a new connection, as a receiver closing idle connections is normal.
 */
function post(target: ReturnType<typeof receiverTarget>, headers: Record<string, string>, body: string, settings: WebhookSettings, agents: GuardedAgents = agentsFor(settings), isRetry = false): Promise<PostAnswer> {
  const { url, options } = target
  return new Promise((resolve, reject) => {
    if (isPrivateLiteral(url, settings.allowPrivateNetworks)) {
      return reject(new Error(`${url.hostname} is a private address`))
    }
    const isHttps = url.protocol === 'https:'
    const send = isHttps ? httpsRequest : httpRequest
    headers['content-length'] = String(Buffer.byteLength(body))
    const request = send({
      ...options,
      method: 'POST',
      headers,
      agent: isHttps ? agents.https : agents.http,
    }, (response: IncomingMessage) => {
      const chunks: Buffer[] = []
      let kept = 0
      response.on('data', (chunk: Buffer) => {
        if (kept < responseBodyLimit) chunks.push(chunk)
        kept += chunk.length
      })
      response.on('end', () => resolve({ statusCode: response.statusCode ?? 0, body: answerText(chunks) }))
      response.on('error', reject)
    })
    const timer = setTimeout(() => request.destroy(new Error(`No answer within ${settings.timeoutMs / 1000} s`)), settings.timeoutMs)
    request.on('close', () => clearTimeout(timer))
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (!isRetry && request.reusedSocket && error.code === 'ECONNRESET') {
        resolve(post(target, headers, body, settings, agents, true))
        return
      }
      reject(error)
    })
    request.end(body)
  })
}

/** A receiver URL, and the request options node would work out from it on every request. */
const receiverTarget = keptByText(1000, (text) => {
  const url = new URL(text)
  return { url, options: urlToHttpOptions(url) }
})

export async function attemptDelivery(delivery: ClaimedDelivery, settings: WebhookSettings): Promise<AttemptOutcome> {
  const started = Date.now()
  try {
    if (!delivery.url) throw new Error(delivery.endpoint_id ? 'The endpoint was deleted' : 'The team has no webhook URL')
    if (!delivery.secret) throw new Error('The team has no webhook secret')
    const answer = await post(receiverTarget(delivery.url), signedHeaders(delivery, delivery.secret), delivery.body, settings)
    return { statusCode: answer.statusCode, responseBody: answer.body, error: null, durationMs: Date.now() - started }
  }
  catch (error) {
    return { statusCode: null, responseBody: null, error: (error as Error).message.slice(0, 500), durationMs: Date.now() - started }
  }
}
