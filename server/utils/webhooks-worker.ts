// Delivers the queued webhook events: claims due rows, signs, POSTs and records each attempt.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Webhook } from 'standardwebhooks'
import type { Database } from './db-drivers'
import { guardedLookup, isPrivateLiteral, privateNetworksAllowed } from './url-guard'
import { setting } from './settings'

export interface WebhookSettings {
  allowPrivateNetworks: boolean
  /** Delays before each retry, in seconds. */
  retrySchedule: readonly number[]
  timeoutMs: number
  pollIntervalMs: number
  /** How long a claimed delivery stays with its worker before another may take it over (that worker died). */
  leaseSeconds: number
  /** How often the auto-disable job runs. */
  maintenanceIntervalMs: number
}

/** Retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (with jitter). */
export const defaultRetrySchedule = [5, 300, 1800, 7200, 18000, 36000, 36000] as const

/** The worker's settings from runtimeConfig (WEBHOOK_ALLOW_PRIVATE_NETWORKS and the test-only knobs). */
export function webhookSettings(): WebhookSettings {
  const scheduleText = setting('webhookRetrySchedule')
  const schedule = scheduleText.split(',').map(Number)
  const isValidSchedule = schedule.every(delay => Number.isFinite(delay) && delay >= 0)
  const timeoutMs = Number(setting('webhookTimeoutMs')) || 15_000
  return {
    allowPrivateNetworks: privateNetworksAllowed(setting('webhookAllowPrivateNetworks'), import.meta.dev),
    retrySchedule: scheduleText && isValidSchedule ? schedule : defaultRetrySchedule,
    timeoutMs,
    pollIntervalMs: Number(setting('webhookPollIntervalMs')) || 1000,
    // long enough for the attempt (bounded by the timeout) and its record
    leaseSeconds: Number(setting('webhookLeaseSeconds')) || Math.ceil((timeoutMs * 2) / 1000) + 5,
    maintenanceIntervalMs: Number(setting('webhookMaintenanceIntervalMs')) || 60_000,
  }
}

interface ClaimedDelivery {
  id: string
  team_id: string
  body: string
  attempts: number
  retry_step: number
  endpoint_id: string | null
  url: string | null
  secret: string | null
  /** The secret before the last rotation, while it is still valid. */
  previous_secret: string | null
}

interface AttemptOutcome {
  statusCode: number | null
  responseBody: string | null
  error: string | null
  durationMs: number
}

/**
 * Takes up to `limit` due deliveries and leases them to this worker. One short statement: the rows
 * are committed as `delivering` before any HTTP request, so no transaction is held while sending
 * (PGlite has one session), and SKIP LOCKED keeps two workers from taking the same row. A lease
 * that runs out (its worker died) makes the row due again.
 */
async function claimDueDeliveries(db: Database, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>(
    `with due as (
       select id from public.webhook_deliveries
       where ((status = 'pending' and next_attempt_at <= now())
          or (status = 'delivering' and locked_until <= now()))
         and (endpoint_id is null or exists (select 1 from public.webhook_endpoints e where e.id = endpoint_id and e.enabled))
       order by next_attempt_at
       limit $1
       for update skip locked
     )
     update public.webhook_deliveries d
     set status = 'delivering', locked_until = now() + make_interval(secs => $2), updated_at = now()
     from due
     where d.id = due.id
     returning d.id, d.team_id, d.body, d.attempts, d.retry_step, d.endpoint_id,
       case when d.endpoint_id is null then (select webhook_url from public.teams t where t.id = d.team_id)
            else (select url from public.webhook_endpoints e where e.id = d.endpoint_id) end as url,
       (select secret from public.webhook_secrets s where s.team_id = d.team_id) as secret,
       (select previous_secret from public.webhook_secrets s where s.team_id = d.team_id and s.previous_expires_at > now()) as previous_secret`,
    [limit, leaseSeconds],
  )
  return rows
}

/** Standard Webhooks headers; after a rotation the signature header holds both signatures, space-separated. */
function signedHeaders(delivery: ClaimedDelivery, secret: string): Record<string, string> {
  const now = new Date()
  const secrets = delivery.previous_secret ? [secret, delivery.previous_secret] : [secret]
  return {
    'content-type': 'application/json',
    'user-agent': 'team-workspace-webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': secrets.map(key => new Webhook(key).sign(delivery.id, now, delivery.body)).join(' '),
  }
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

/** One POST: no redirects followed, an overall timeout, and the SSRF guard on the address it connects to. */
function post(url: URL, headers: Record<string, string>, body: string, settings: WebhookSettings): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    if (isPrivateLiteral(url, settings.allowPrivateNetworks)) {
      return reject(new Error(`${url.hostname} is a private address`))
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const request = send(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: guardedLookup(settings.allowPrivateNetworks),
      agent: false,
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
    request.on('error', reject)
    request.end(body)
  })
}

async function attemptDelivery(delivery: ClaimedDelivery, settings: WebhookSettings): Promise<AttemptOutcome> {
  const started = Date.now()
  try {
    if (!delivery.url) throw new Error(delivery.endpoint_id ? 'The endpoint was deleted' : 'The team has no webhook URL')
    if (!delivery.secret) throw new Error('The team has no webhook secret')
    const url = new URL(delivery.url)
    const answer = await post(url, signedHeaders(delivery, delivery.secret), delivery.body, settings)
    return { statusCode: answer.statusCode, responseBody: answer.body, error: null, durationMs: Date.now() - started }
  }
  catch (error) {
    return { statusCode: null, responseBody: null, error: (error as Error).message.slice(0, 500), durationMs: Date.now() - started }
  }
}

function withJitter(seconds: number): number {
  return seconds * (0.9 + Math.random() * 0.2)
}

/** Records an attempt and decides what comes next: done on 2xx, stop on 410, else the next retry or failed. */
async function recordAttempt(db: Database, delivery: ClaimedDelivery, outcome: AttemptOutcome, settings: WebhookSettings) {
  const code = outcome.statusCode
  const isSuccess = code !== null && code >= 200 && code < 300
  const isGone = code === 410
  const retryStep = isSuccess ? delivery.retry_step : delivery.retry_step + 1
  const hasRetryLeft = !isSuccess && !isGone && delivery.retry_step < settings.retrySchedule.length
  const status = isSuccess ? 'succeeded' : hasRetryLeft ? 'pending' : 'failed'
  const delaySeconds = hasRetryLeft ? withJitter(settings.retrySchedule[delivery.retry_step]!) : 0
  const error = outcome.error ?? (isSuccess ? null : isGone ? 'The receiver answered 410 Gone; no more retries' : `The receiver answered ${code}`)
  await db.transaction(async (tx) => {
    await tx.query(
      `insert into public.webhook_attempts (delivery_id, team_id, attempt, url, status_code, error, duration_ms, response_body)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [delivery.id, delivery.team_id, delivery.attempts + 1, delivery.url ?? '', code, error, outcome.durationMs, outcome.responseBody],
    )
    if (delivery.endpoint_id) {
      // the auto-disable job reads how long the endpoint has failed every attempt
      await tx.query(
        `update public.webhook_endpoints
         set failing_since = case when $2 then null else coalesce(failing_since, now()) end
         where id = $1 and failing_since is distinct from (case when $2 then null else coalesce(failing_since, now()) end)`,
        [delivery.endpoint_id, isSuccess],
      )
    }
    await tx.query(
      `update public.webhook_deliveries
       set status = $2, attempts = attempts + 1, retry_step = $3, last_status_code = $4, last_error = $5,
           next_attempt_at = case when $2 = 'pending' then now() + make_interval(secs => $6) else next_attempt_at end,
           locked_until = null, updated_at = now()
       where id = $1`,
      [delivery.id, status, retryStep, code, error, delaySeconds],
    )
  })
}

async function deliver(db: Database, delivery: ClaimedDelivery, settings: WebhookSettings) {
  const outcome = await attemptDelivery(delivery, settings)
  await recordAttempt(db, delivery, outcome, settings)
}

/** Delivers the deliveries that are due now (one batch) and waits for them; returns how many were attempted. */
export async function deliverDueWebhooks(db: Database, settings: WebhookSettings, batchSize = 10): Promise<number> {
  const claimed = await claimDueDeliveries(db, batchSize, settings.leaseSeconds)
  await Promise.all(claimed.map(delivery => deliver(db, delivery, settings)))
  return claimed.length
}

export interface WebhookWorker {
  stop(): Promise<void>
}

/**
 * Polls the outbox until stopped, with up to `concurrency` deliveries in flight, so that one slow
 * receiver does not hold up the others. Any number of workers (app instances) may share one database.
 */
export function startWebhookWorker(db: Database, settings: WebhookSettings, concurrency = 10): WebhookWorker {
  let isStopped = false
  let hasLooked = false
  let wake: (() => void) | undefined
  const inFlight = new Set<Promise<void>>()
  const sleep = () => new Promise<void>((resolve) => {
    wake = resolve
    setTimeout(resolve, settings.pollIntervalMs)
  })
  const loop = (async () => {
    while (!isStopped) {
      let claimed: ClaimedDelivery[] = []
      const free = concurrency - inFlight.size
      try {
        if (free > 0) claimed = await claimDueDeliveries(db, free, settings.leaseSeconds)
      }
      catch (error) {
        if (!isStopped) console.error('[webhooks] could not read the outbox:', (error as Error).message)
      }
      for (const delivery of claimed) {
        const running: Promise<void> = deliver(db, delivery, settings)
          .catch(error => console.error('[webhooks] could not record a delivery attempt:', (error as Error).message))
          .finally(() => {
            inFlight.delete(running)
            wake?.()
          })
        inFlight.add(running)
      }
      if (!hasLooked) {
        hasLooked = true
        console.info(`[webhooks] delivery worker running (polls every ${settings.pollIntervalMs} ms)`)
      }
      // look again at once while there may be more due work and room for it
      if (isStopped || claimed.length === 0 || claimed.length === free) await sleep()
    }
    await Promise.all(inFlight)
  })()
  return {
    async stop() {
      isStopped = true
      wake?.()
      await loop
    },
  }
}
