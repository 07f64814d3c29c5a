// Delivers the queued webhook events: claims due rows, signs, POSTs and records each attempt.
import { createHmac, randomUUID } from 'node:crypto'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { urlToHttpOptions } from 'node:url'
import type { Database } from '../db/db-drivers'
import { guardedAgents, isPrivateLiteral, privateNetworksAllowed, type GuardedAgents } from '../url-guard'
import { setting } from '../settings'
import { webhookMetrics } from './webhook-metrics'

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
  /** The receiver the per-endpoint bound counts against: the endpoint, or the team (its webhook_url). */
  target: string
  /** When the event was queued (its write's transaction), in ms since the epoch. */
  queued_at: number
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

/** How many due rows one claim looks at (and locks) to share its slots among receivers. */
const claimScan = 500

/**
 * How long a claim holds the receivers it took deliveries for: other workers pass over their rows
 * meanwhile, and each claim that takes more of a receiver's rows renews its hold. A worker that
 * dies holds its receivers this long at most.
 */
const holdSeconds = 5

/**
 * Takes up to `limit` due deliveries and leases them to this worker (`worker`, its id), at most
 * `room` per receiver (`roomOf`: target -> how many more this worker takes for it; `room` for any
 * other). One short statement: the rows are committed as `delivering` before any HTTP request, so
 * no transaction is held while sending (PGlite has one session). The rows it looks at are locked
 * as they are read, skipping locked ones (SKIP LOCKED), so that two workers never take the same row,
 * and a claim that runs beside another one takes the rows after the other's instead of finding all
 * of its own candidates locked and taking none. It passes over the rows of receivers another worker
 * holds, and holds the receivers it takes rows for (`holdSeconds`), so that one worker at a time
 * sends to a receiver. Every claimed row is sent at once, so its lease runs from the start of its
 * attempt. A lease that runs out (its worker died) makes the row due again.
 */
async function claimDueDeliveries(db: Database, worker: string, limit: number, leaseSeconds: number, room = limit, roomOf: ReadonlyMap<string, number> = new Map()): Promise<ClaimedDelivery[]> {
  // the statement is public.claim_webhook_deliveries (a migration): its own planner settings keep
  // it on the due rows' index when the statistics say few rows are pending, so that the plan it
  // keeps for the session is that walk (a prepared statement's generic plan once read every
  // pending row: a burst of 5,000 was delivered at 15 to 80 a second, bench:webhooks)
  const { rows } = await db.query<ClaimedDelivery>(
    'select * from public.claim_webhook_deliveries($1, $2, $3, $4, $5, $6, $7)',
    [limit, leaseSeconds, room, JSON.stringify(Object.fromEntries(roomOf)), claimScan, worker, holdSeconds],
  )
  return rows
}

/**
 * Deletes the holds that ran out over a minute ago (receivers no one has sent to since), so that
 * the table stays as small as the set of receivers being sent to; a hold is made again by the next
 * claim of its receiver. Run by the periodic webhook job.
 */
export async function forgetLapsedHolds(db: Database): Promise<number> {
  const { rowCount } = await db.query(`delete from public.webhook_receiver_holds where held_until < now() - interval '1 minute'`)
  return rowCount ?? 0
}

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
 * one team's secret and sends them to one URL. At most `size` are kept; then all are dropped (a
 * rotated-out secret or a changed URL goes with the rest).
 */
function keptByText<T>(size: number, compute: (text: string) => T): (text: string) => T {
  const kept = new Map<string, T>()
  return (text) => {
    let value = kept.get(text)
    if (value === undefined) {
      value = compute(text)
      if (kept.size >= size) kept.clear()
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
function signedHeaders(delivery: ClaimedDelivery, secret: string): Record<string, string> {
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

async function attemptDelivery(delivery: ClaimedDelivery, settings: WebhookSettings): Promise<AttemptOutcome> {
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

function withJitter(seconds: number): number {
  return seconds * (0.9 + Math.random() * 0.2)
}

interface FinishedAttempt {
  delivery: ClaimedDelivery
  outcome: AttemptOutcome
}

/**
 * Records finished attempts and decides what comes next for each: done on 2xx, stop on 410, else
 * the next retry or failed. One statement for the whole batch: the attempts, each endpoint's
 * failing_since (from its last attempt in the batch), and the deliveries.
 */
async function recordAttempts(db: Database, finished: readonly FinishedAttempt[], settings: WebhookSettings) {
  if (!finished.length) return
  const results = finished.map(({ delivery, outcome }, order) => {
    const code = outcome.statusCode
    const isSuccess = code !== null && code >= 200 && code < 300
    const isGone = code === 410
    const hasRetryLeft = !isSuccess && !isGone && delivery.retry_step < settings.retrySchedule.length
    return {
      order,
      id: delivery.id,
      team_id: delivery.team_id,
      endpoint_id: delivery.endpoint_id,
      attempt: delivery.attempts + 1,
      url: delivery.url ?? '',
      status_code: code,
      error: outcome.error ?? (isSuccess ? null : isGone ? 'The receiver answered 410 Gone; no more retries' : `The receiver answered ${code}`),
      duration_ms: outcome.durationMs,
      response_body: outcome.responseBody,
      is_success: isSuccess,
      status: isSuccess ? 'succeeded' : hasRetryLeft ? 'pending' : 'failed',
      retry_step: isSuccess ? delivery.retry_step : delivery.retry_step + 1,
      delay_seconds: hasRetryLeft ? withJitter(settings.retrySchedule[delivery.retry_step]!) : 0,
    }
  })
  await db.query(
    `with reported as (
       select * from jsonb_to_recordset($1::jsonb) as r(
         "order" int, id uuid, team_id uuid, endpoint_id uuid, attempt int, url text, status_code int, error text,
         duration_ms int, response_body text, is_success boolean, status text, retry_step int, delay_seconds float8)
     ),
     -- an endpoint disabled (in any way) while the attempt was in flight: a failed attempt is not
     -- retried, since claims pass over disabled endpoints and a retry would stay pending for good;
     -- it ends failed, recoverable, as the queued ones of a revoked key or an auto-disable do
     results as (
       select r.*, (r.status = 'pending' and e.enabled is false) as stopped
       from reported r left join public.webhook_endpoints e on e.id = r.endpoint_id and e.team_id = r.team_id
     ),
     attempts as (
       insert into public.webhook_attempts (delivery_id, team_id, attempt, url, status_code, error, duration_ms, response_body)
       select id, team_id, attempt, url, status_code, error, duration_ms, response_body from results order by "order"
     ),
     -- the auto-disable job reads how long the endpoint has failed every attempt
     last_per_endpoint as (
       select distinct on (endpoint_id) endpoint_id, is_success from results
       where endpoint_id is not null order by endpoint_id, "order" desc
     ),
     endpoints as (
       update public.webhook_endpoints e
       set failing_since = case when l.is_success then null else coalesce(e.failing_since, now()) end
       from last_per_endpoint l
       where e.id = l.endpoint_id
         and e.failing_since is distinct from (case when l.is_success then null else coalesce(e.failing_since, now()) end)
     )
     update public.webhook_deliveries d
     set status = case when r.stopped then 'failed' else r.status end,
         attempts = d.attempts + 1, retry_step = r.retry_step, last_status_code = r.status_code,
         last_error = case when r.stopped then 'The endpoint was disabled' else r.error end,
         next_attempt_at = case when r.status = 'pending' and not r.stopped then now() + make_interval(secs => r.delay_seconds) else d.next_attempt_at end,
         locked_until = null, updated_at = now()
     from results r
     where d.id = r.id and d.team_id = r.team_id`,
    [JSON.stringify(results)],
  )
  const now = Date.now()
  for (const result of results) {
    if (result.is_success) webhookMetrics().deliveryLatency.observe((now - finished[result.order]!.delivery.queued_at) / 1000)
  }
}

export interface WorkerLimits {
  /** Deliveries in flight at once, over all receivers. */
  total: number
  /** Deliveries in flight at once to one receiver (an endpoint, or a team's webhook_url). */
  perEndpoint: number
  /** The most deliveries one claim takes. */
  batchSize: number
}

export const defaultWorkerLimits: WorkerLimits = { total: 100, perEndpoint: 10, batchSize: 100 }

/**
 * How long a finished attempt may wait for others to be recorded with it in one statement (a full
 * batch is recorded at once). In a burst to one receiver, recording as soon as the previous
 * statement had finished gave statements of ~9 attempts: 540 for 5,000 deliveries (bench:webhooks).
 */
const recordDelayMs = 20

export interface WebhookWorker {
  /** Look for due deliveries now (a notification said some were queued). */
  wake(): void
  stop(): Promise<void>
}

/** Leased rows this worker holds but has not started: back to pending, so that no one waits for their lease (stopping). */
async function releaseDeliveries(db: Database, ids: string[]) {
  if (!ids.length) return
  await db.query(
    `update public.webhook_deliveries set status = 'pending', locked_until = null, updated_at = now()
     where id = any ($1::uuid[]) and status = 'delivering'`,
    [ids],
  )
}

/** Stopping, once nothing of this worker is in flight: its receivers go to the next claim, without waiting for the holds to run out. */
async function releaseHolds(db: Database, worker: string) {
  await db.query('delete from public.webhook_receiver_holds where worker = $1', [worker])
}

/**
 * Delivers until stopped. It looks for due deliveries when woken (`wake()`: a notification that
 * some were queued), when a receiver may have more due and has room for them (below), and every
 * `pollIntervalMs` as a fallback. It sends concurrently within `limits` (so one slow receiver does
 * not hold up the others), and keeps more of each receiver's deliveries claimed and waiting, so that
 * a finished delivery's slot is refilled at once instead of after a round trip to the database: one
 * more round, and for a receiver that answers fast as many rounds as it clears within half the wait
 * a lease allows (up to two batches in all), so that a burst to one fast receiver is not held up by
 * the claims. It claims again for a receiver once half of what it may hold is gone, if its last
 * claim took all the room it had (else nothing more of it was due, and a notification says when
 * there is: claiming on every answer sent 31 statements for 30 deliveries). A waiting
 * delivery starts within the wait its lease (twice the timeout plus 5 s) leaves beside its attempt
 * and its record; one that waited too long anyway (its receiver slowed down) is left to its lease.
 * Finished attempts are recorded in batches (what finished within `recordDelayMs`, or while the
 * previous statement ran), beside the sending and claiming. Any number of workers (app instances) may share
 * one database; each receiver is sent to by the worker that holds it (see claimDueDeliveries). A number for `limits` is the total bound (the per-endpoint bound is then no larger).
 */
export function startWebhookWorker(db: Database, settings: WebhookSettings, limits: number | Partial<WorkerLimits> = {}): WebhookWorker {
  const { total, perEndpoint, batchSize } = typeof limits === 'number'
    ? { total: limits, perEndpoint: Math.min(limits, defaultWorkerLimits.perEndpoint), batchSize: limits }
    : { ...defaultWorkerLimits, ...limits }
  /** This worker's id in the receivers' holds. */
  const worker = randomUUID()
  /** How long a claimed delivery may wait and still be started (its attempt and record must fit in the lease). */
  const maxWaitMs = settings.leaseSeconds * 1000 - settings.timeoutMs - 3000
  let isStopped = false
  // look at once on start
  let shouldLook = true
  let hasLooked = false
  let wakeSleeper: (() => void) | undefined
  let running = 0
  let waitingCount = 0
  /** target -> deliveries in flight to it */
  const busy = new Map<string, number>()
  /** target -> claimed deliveries not started yet, oldest first */
  const waiting = new Map<string, { delivery: ClaimedDelivery, claimedAt: number }[]>()
  /** target -> how long its attempts take (ms): the slowest recent one, fading by a fifth with each newer one */
  const pace = new Map<string, number>()
  /**
   * The most waiting rounds one receiver may have (in flight and waiting, at most two batches): it
   * claims again when half is gone, so that a refill is a full batch. With one batch at most, the
   * refills of a burst took 50 rows each: twice the claims, each looking at up to `claimScan` rows,
   * on the burst's path (bench:webhooks: 0.32 of a bare sender then, 0.34 to 0.39 now).
   */
  const maxRounds = Math.max(1, Math.floor((2 * batchSize) / perEndpoint) - 1)
  /** What one claim may take for a receiver this worker holds nothing of: one round in flight and one waiting. */
  const newRoom = 2 * perEndpoint
  /** Receivers whose last claim filled all the room it had for them: more of theirs may be due. */
  const mayHaveMore = new Set<string>()
  const finished: FinishedAttempt[] = []
  const sending = new Set<Promise<void>>()
  let recording: Promise<void> | undefined
  let recordTimer: ReturnType<typeof setTimeout> | undefined

  const wake = () => {
    shouldLook = true
    wakeSleeper?.()
  }
  const sleep = () => new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      shouldLook = true
      resolve()
    }, settings.pollIntervalMs)
    wakeSleeper = () => {
      clearTimeout(timer)
      resolve()
    }
  }).finally(() => {
    wakeSleeper = undefined
  })

  const add = (map: Map<string, number>, target: string, change: number) => {
    const count = (map.get(target) ?? 0) + change
    if (count) map.set(target, count)
    else map.delete(target)
  }

  /** Records what has finished: at once when a batch is full or the worker stops, else within `recordDelayMs`. */
  const record = (isUrgent = false) => {
    if (recording || !finished.length) return
    if (!isUrgent && !isStopped && finished.length < batchSize) {
      recordTimer ??= setTimeout(() => {
        recordTimer = undefined
        record(true)
      }, recordDelayMs)
      return
    }
    clearTimeout(recordTimer)
    recordTimer = undefined
    const batch = finished.splice(0)
    recording = recordAttempts(db, batch, settings)
      .catch((error) => {
        // the rows stay `delivering` until their lease runs out; then they are sent again
        console.error(`[webhooks] could not record ${batch.length} delivery attempt(s):`, (error as Error).message)
      })
      .finally(() => {
        recording = undefined
        // what finished meanwhile
        record()
      })
  }

  /** How many of a receiver's deliveries this worker may hold (in flight and waiting); one waiting round until it has answered. */
  const depthOf = (target: string) => {
    const ms = pace.get(target)
    const rounds = ms === undefined ? 1 : Math.min(maxRounds, Math.max(1, Math.floor(maxWaitMs / (2 * Math.max(ms, 1)))))
    return perEndpoint * (1 + rounds)
  }
  const heldFor = (target: string) => (busy.get(target) ?? 0) + (waiting.get(target)?.length ?? 0)
  /** Half of what a receiver may hold is gone, and it may have more due: claim more while the rest is sent. */
  const needsRefill = (target: string) => mayHaveMore.has(target) && heldFor(target) <= depthOf(target) / 2
  const anyNeedsRefill = () => {
    for (const target of mayHaveMore) {
      if (needsRefill(target)) return true
    }
    return false
  }

  const start = (delivery: ClaimedDelivery) => {
    running++
    add(busy, delivery.target, 1)
    const attempt: Promise<void> = attemptDelivery(delivery, settings).then((outcome) => {
      finished.push({ delivery, outcome })
      running--
      add(busy, delivery.target, -1)
      pace.set(delivery.target, Math.max(outcome.durationMs, 0.8 * (pace.get(delivery.target) ?? 0)))
      sending.delete(attempt)
      record()
      startWaiting()
      if (needsRefill(delivery.target)) wakeSleeper?.()
    })
    sending.add(attempt)
  }

  /** Starts waiting deliveries while their receiver and the total have room. */
  const startWaiting = () => {
    for (const [target, queue] of waiting) {
      while (queue.length && running < total && (busy.get(target) ?? 0) < perEndpoint) {
        const { delivery, claimedAt } = queue.shift()!
        waitingCount--
        if (Date.now() - claimedAt <= maxWaitMs) start(delivery)
      }
      if (!queue.length) waiting.delete(target)
      if (running >= total) return
    }
  }

  /** target -> how many more of its deliveries the next claim may take, for the receivers held or heard from */
  const roomOf = () => {
    const room = new Map<string, number>()
    for (const target of new Set([...busy.keys(), ...waiting.keys(), ...pace.keys()])) room.set(target, depthOf(target) - heldFor(target))
    return room
  }

  const loop = (async () => {
    while (!isStopped) {
      const free = Math.min(2 * total - running - waitingCount, batchSize)
      if ((shouldLook || anyNeedsRefill()) && free > 0) {
        shouldLook = false
        const room = roomOf()
        let claimed: ClaimedDelivery[] = []
        try {
          claimed = await claimDueDeliveries(db, worker, free, settings.leaseSeconds, newRoom, room)
        }
        catch (error) {
          if (!isStopped) console.error('[webhooks] could not read the outbox:', (error as Error).message)
        }
        const claimedAt = Date.now()
        const claimedFor = new Map<string, number>()
        for (const delivery of claimed) {
          waiting.set(delivery.target, [...(waiting.get(delivery.target) ?? []), { delivery, claimedAt }])
          waitingCount++
          add(claimedFor, delivery.target, 1)
        }
        // a receiver that got all the room it had may have more due; one that got less has none
        // this worker could take (the rest, if any, is another worker's); a notification or the
        // poll says when there is more
        for (const target of new Set([...room.keys(), ...claimedFor.keys()])) {
          const targetRoom = room.get(target) ?? newRoom
          if (targetRoom <= 0) continue
          if ((claimedFor.get(target) ?? 0) >= targetRoom) mayHaveMore.add(target)
          else mayHaveMore.delete(target)
        }
        startWaiting()
        // a receiver this worker holds nothing of after a claim is forgotten (it starts again from
        // one waiting round), so that the map stays as small as what is held
        for (const target of pace.keys()) {
          if (!heldFor(target)) pace.delete(target)
        }
        // a full batch: there may be more due work
        if (claimed.length === free) shouldLook = true
        if (!hasLooked) {
          hasLooked = true
          console.info(`[webhooks] delivery worker running (polls every ${settings.pollIntervalMs} ms)`)
        }
        continue
      }
      await sleep()
    }
    const unstarted = [...waiting.values()].flat().map(({ delivery }) => delivery.id)
    waiting.clear()
    waitingCount = 0
    await releaseDeliveries(db, unstarted)
      .catch(error => console.error('[webhooks] could not release unsent deliveries:', (error as Error).message))
    await Promise.all(sending)
    // only now: another worker taking a receiver while this one still sends to it would exceed its bound
    await releaseHolds(db, worker)
      .catch(error => console.error('[webhooks] could not release held receivers:', (error as Error).message))
    while (recording || finished.length) {
      record(true)
      await recording
    }
  })()
  return {
    wake,
    async stop() {
      isStopped = true
      wake()
      await loop
      // the kept connections close with the worker
      senderAgents?.agents.http.destroy()
      senderAgents?.agents.https.destroy()
      senderAgents = undefined
    },
  }
}
