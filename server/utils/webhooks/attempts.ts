// Recording finished attempts: the retries with jitter, the endpoints' failing_since, the deliveries' state.
import type { Database } from '../db/db-drivers'
import type { ClaimedDelivery } from './claims'
import type { WebhookSettings } from './delivery-settings'
import type { AttemptOutcome } from './sender'
import { webhookMetrics } from './webhook-metrics'

function withJitter(seconds: number): number {
  return seconds * (0.9 + Math.random() * 0.2)
}

export interface FinishedAttempt {
  delivery: ClaimedDelivery
  outcome: AttemptOutcome
}

/**
 * Records finished attempts and decides what comes next for each: done on 2xx, stop on 410, else
 * the next retry or failed. One statement for the whole batch: the attempts, each endpoint's
 * failing_since (from its last attempt in the batch), and the deliveries.
 */
export async function recordAttempts(db: Database, finished: readonly FinishedAttempt[], settings: WebhookSettings) {
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
