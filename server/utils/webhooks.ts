import { randomBytes } from 'node:crypto'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Webhook } from 'standardwebhooks'
import type { WebhookDeliverySummary } from '#shared/types/invitations'
import type { AuditedClient } from './audited-client'
import type { Database, Queryable } from './db'
import { setting } from './settings'
import { guardedLookup, isPrivateLiteral } from './url-guard'

export type WebhookEvent = 'invitation.created' | 'invitation.accepted' | 'invitation.revoked' | 'webhook.test'

export interface WebhookSettings {
  allowPrivateNetworks: boolean
  /** Delays before each retry, in seconds. */
  retrySchedule: readonly number[]
  timeoutMs: number
  pollIntervalMs: number
}

/** DESIGN.md: retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (with jitter). */
export const defaultRetrySchedule = [5, 300, 1800, 7200, 18000, 36000, 36000] as const

/** The worker's settings from runtimeConfig (WEBHOOK_ALLOW_PRIVATE_NETWORKS and the test-only knobs). */
export function webhookSettings(): WebhookSettings {
  const scheduleText = setting('webhookRetrySchedule')
  const schedule = scheduleText.split(',').map(Number)
  const isValidSchedule = schedule.every(delay => Number.isFinite(delay) && delay >= 0)
  return {
    allowPrivateNetworks: setting('webhookAllowPrivateNetworks') === 'true',
    retrySchedule: scheduleText && isValidSchedule ? schedule : defaultRetrySchedule,
    timeoutMs: Number(setting('webhookTimeoutMs')) || 15_000,
    pollIntervalMs: Number(setting('webhookPollIntervalMs')) || 1000,
  }
}

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** Creates the team's signing secret unless it has one (teams made before this feature, or by seed SQL). */
export async function ensureWebhookSecret(tx: Queryable, teamId: string): Promise<void> {
  await tx.query('insert into public.webhook_secrets (team_id, secret) values ($1, $2) on conflict (team_id) do nothing', [teamId, newSecret()])
}

/**
 * Queues `event` for the team's webhook_url in the caller's transaction (the outbox), so the
 * delivery exists exactly when the change that fired it is committed. Without a webhook_url
 * nothing is queued; returns the delivery id (the `webhook-id`) or null.
 */
export async function fireWebhook(tx: Queryable, teamId: string, event: WebhookEvent, data: Record<string, unknown>): Promise<string | null> {
  const body = JSON.stringify({ type: event, timestamp: new Date().toISOString(), data })
  const { rows } = await tx.query<{ id: string }>(
    `insert into public.webhook_deliveries (team_id, event, body)
     select id, $2, $3 from public.teams where id = $1 and webhook_url is not null
     returning id`,
    [teamId, event, body],
  )
  if (!rows[0]) return null
  await ensureWebhookSecret(tx, teamId)
  return rows[0].id
}

/** The team's signing secret. */
export async function getWebhookSecret(client: AuditedClient, teamId: string): Promise<string> {
  return client.transaction(async (tx) => {
    await ensureWebhookSecret(tx, teamId)
    const { rows } = await tx.query<{ secret: string }>('select secret from public.webhook_secrets where team_id = $1', [teamId])
    return rows[0]!.secret
  })
}

/** Replaces the team's signing secret; deliveries from now on (retries included) are signed with the new one. */
export async function rotateWebhookSecret(client: AuditedClient, teamId: string): Promise<string> {
  const { rows } = await client.query<{ secret: string }>(
    `insert into public.webhook_secrets (team_id, secret) values ($1, $2)
     on conflict (team_id) do update set secret = excluded.secret, rotated_at = now()
     returning secret`,
    [teamId, newSecret()],
  )
  return rows[0]!.secret
}

/** The team's most recent deliveries, newest first. */
export async function listWebhookDeliveries(client: AuditedClient, teamId: string, limit = 50): Promise<WebhookDeliverySummary[]> {
  const { rows } = await client.read<WebhookDeliverySummary>(
    `select id, event, status, attempts, last_status_code, last_error,
            case when status in ('pending', 'delivering') then next_attempt_at end as next_attempt_at, created_at
     from public.webhook_deliveries
     where team_id = $1
     order by created_at desc, id
     limit $2`,
    [teamId, limit],
  )
  return rows
}

async function requireWebhookUrl(tx: Queryable, teamId: string) {
  const { rows } = await tx.query<{ webhook_url: string | null }>('select webhook_url from public.teams where id = $1', [teamId])
  if (!rows[0]?.webhook_url) throw createError({ statusCode: 409, statusMessage: 'Set a webhook URL in Settings > General first' })
}

/** Queues a delivery again now, with the same `webhook-id` and body, and a fresh retry schedule. */
export async function resendWebhookDelivery(client: AuditedClient, teamId: string, deliveryId: string): Promise<void> {
  await client.transaction(async (tx) => {
    const { rows } = await tx.query<{ status: string }>(
      'select status from public.webhook_deliveries where id = $1 and team_id = $2 for update',
      [deliveryId, teamId],
    )
    if (!rows[0]) throw createError({ statusCode: 404, statusMessage: 'Delivery not found' })
    await requireWebhookUrl(tx, teamId)
    if (rows[0].status === 'delivering') throw createError({ statusCode: 409, statusMessage: 'The delivery is being sent right now' })
    await tx.query(
      `update public.webhook_deliveries
       set status = 'pending', retry_step = 0, next_attempt_at = now(), locked_until = null, updated_at = now()
       where id = $1 and team_id = $2`,
      [deliveryId, teamId],
    )
  })
}

/** Queues a `webhook.test` event; 409 when the team has no webhook_url. */
export async function queueTestWebhook(client: AuditedClient, team: { id: string, name: string }): Promise<string> {
  return client.transaction(async (tx) => {
    await requireWebhookUrl(tx, team.id)
    const id = await fireWebhook(tx, team.id, 'webhook.test', { team_id: team.id, team_name: team.name })
    return id!
  })
}

// ---- delivery -------------------------------------------------------------------------------

interface ClaimedDelivery {
  id: string
  team_id: string
  body: string
  attempts: number
  retry_step: number
  webhook_url: string | null
  secret: string | null
}

interface AttemptOutcome {
  statusCode: number | null
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
       where (status = 'pending' and next_attempt_at <= now())
          or (status = 'delivering' and locked_until <= now())
       order by next_attempt_at
       limit $1
       for update skip locked
     )
     update public.webhook_deliveries d
     set status = 'delivering', locked_until = now() + make_interval(secs => $2), updated_at = now()
     from due
     where d.id = due.id
     returning d.id, d.team_id, d.body, d.attempts, d.retry_step,
       (select webhook_url from public.teams t where t.id = d.team_id) as webhook_url,
       (select secret from public.webhook_secrets s where s.team_id = d.team_id) as secret`,
    [limit, leaseSeconds],
  )
  return rows
}

function signedHeaders(delivery: ClaimedDelivery, secret: string): Record<string, string> {
  const now = new Date()
  return {
    'content-type': 'application/json',
    'user-agent': 'team-workspace-webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(delivery.id, now, delivery.body),
  }
}

/** One POST: no redirects followed, an overall timeout, and the SSRF guard on the address it connects to. */
function post(url: URL, headers: Record<string, string>, body: string, settings: WebhookSettings): Promise<number> {
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
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
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
    if (!delivery.webhook_url) throw new Error('The team has no webhook URL')
    if (!delivery.secret) throw new Error('The team has no webhook secret')
    const url = new URL(delivery.webhook_url)
    const statusCode = await post(url, signedHeaders(delivery, delivery.secret), delivery.body, settings)
    return { statusCode, error: null, durationMs: Date.now() - started }
  }
  catch (error) {
    return { statusCode: null, error: (error as Error).message.slice(0, 500), durationMs: Date.now() - started }
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
      `insert into public.webhook_attempts (delivery_id, team_id, attempt, url, status_code, error, duration_ms)
       values ($1, $2, $3, $4, $5, $6, $7)`,
      [delivery.id, delivery.team_id, delivery.attempts + 1, delivery.webhook_url ?? '', code, error, outcome.durationMs],
    )
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

function leaseSeconds(settings: WebhookSettings): number {
  // long enough for the attempt (bounded by the timeout) and its record; then another worker may take over
  return Math.ceil((settings.timeoutMs * 2) / 1000) + 5
}

/** Delivers the deliveries that are due now (one batch) and waits for them; returns how many were attempted. */
export async function deliverDueWebhooks(db: Database, settings: WebhookSettings, batchSize = 10): Promise<number> {
  const claimed = await claimDueDeliveries(db, batchSize, leaseSeconds(settings))
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
        if (free > 0) claimed = await claimDueDeliveries(db, free, leaseSeconds(settings))
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
