// Standard Webhooks signatures and headers of a delivery.
import { createHmac } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { ClaimedDelivery } from './claims'

/**
 * A Standard Webhooks signature: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` keyed with
 * the secret's bytes (base64 after `whsec_`), as the standardwebhooks library signs, with node's
 * HMAC: the library's JavaScript SHA-256 and its decoding of the secret took 5% of the worker's CPU
 * in a burst (a profile of bench:webhooks). Receivers verify it with the library (the tests do).
 */
function signature(secret: string, id: string, timestamp: string, body: string): string {
  return `v1,${createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/**
 * `compute(text)`, kept by its text for the next call: a burst signs thousands of deliveries with
 * one team's secret and sends them to one URL. The `size` used last are kept (a rotated-out secret
 * or a changed URL is dropped in time).
 */
export function keptByText<T extends NonNullable<unknown>>(size: number, compute: (text: string) => T): (text: string) => T {
  const kept = new LRUCache<string, T>({ max: size })
  return (text) => {
    let value = kept.get(text)
    if (value === undefined) {
      value = compute(text)
      kept.set(text, value)
    }
    return value
  }
}

/** A secret's key bytes (base64 after `whsec_`). */
const signingKey = keptByText(1000, (secret) => {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64')
  if (!key.length) throw new Error('The webhook secret is empty')
  return key
})

/** Standard Webhooks headers; after a rotation the signature header holds both signatures, space-separated. */
export function signedHeaders(delivery: ClaimedDelivery, secret: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const secrets = delivery.previous_secret ? [secret, delivery.previous_secret] : [secret]
  return {
    'content-type': 'application/json',
    'user-agent': 'team-workspace-webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets.map(key => signature(key, delivery.id, timestamp, delivery.body)).join(' '),
  }
}
