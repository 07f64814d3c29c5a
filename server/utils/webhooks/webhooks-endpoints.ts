// A team's webhook endpoints: receivers with event filters, their test events, recovery and auto-disable.
import type { WebhookEndpoint } from '#shared/types/webhooks'
import { webhookEventTypes } from '#shared/utils/webhook-events'
import type { AuditedClient } from '../db/audited-client'
import type { Database, Queryable } from '../db/db-drivers'
import { domainTables } from '../records/table-registry'
import { webhookUrlProblem } from '../http/url-guard'
import { ensureWebhookSecret } from './webhooks'
import { webhookSettings } from './delivery-settings'

export interface EndpointInput {
  url?: string
  description?: string
  events?: string[]
  enabled?: boolean
}

/** After this long failing every attempt an endpoint is disabled. */
export const autoDisableAfterDays = 5

// the key that subscribed the endpoint, by name (the scalar subquery reads the endpoint's own row in every statement)
const endpointColumns = `id, url, description, events, enabled, disabled_reason, disabled_at, failing_since, created_at, updated_at,
  created_by_api_key_id, (select k.name from public.api_keys k
    where k.id = webhook_endpoints.created_by_api_key_id and k.team_id = webhook_endpoints.team_id) as created_by_api_key_name`

/** The event types endpoints may subscribe to, from the table registry. */
export async function subscribableEventTypes(): Promise<string[]> {
  return webhookEventTypes((await domainTables()).map(table => table.name))
}

/** 400 naming the first unknown event type or an unsafe URL. */
async function validateEndpoint(input: EndpointInput): Promise<void> {
  if (input.events) {
    const known = new Set(await subscribableEventTypes())
    const unknown = input.events.find(type => type !== '*' && !known.has(type))
    if (unknown) throw createError({ statusCode: 400, statusMessage: `events: unknown event type "${unknown}"` })
  }
  const problem = input.url && await webhookUrlProblem(input.url, webhookSettings().allowPrivateNetworks)
  if (problem) throw createError({ statusCode: 400, statusMessage: `url: ${problem}` })
}

function notFound() {
  return createError({ statusCode: 404, statusMessage: 'Webhook endpoint not found' })
}

/** The team's endpoints, oldest first. */
export async function listWebhookEndpoints(client: AuditedClient, teamId: string): Promise<WebhookEndpoint[]> {
  const { rows } = await client.read<WebhookEndpoint>(
    `select ${endpointColumns} from public.webhook_endpoints where team_id = $1 order by created_at, id`,
    [teamId],
  )
  return rows
}

/** One endpoint of the team; 404 for another team's. */
export async function getWebhookEndpoint(client: AuditedClient, teamId: string, endpointId: string): Promise<WebhookEndpoint> {
  const { rows } = await client.read<WebhookEndpoint>(`select ${endpointColumns} from public.webhook_endpoints where id = $1 and team_id = $2`, [endpointId, teamId])
  if (!rows[0]) throw notFound()
  return rows[0]
}

/** Adds an endpoint (made by `apiKeyId` when a key subscribed it); its events apply to writes committed from now on. */
export async function createWebhookEndpoint(client: AuditedClient, teamId: string, input: EndpointInput & { url: string, events: string[] }, apiKeyId: string | null = null): Promise<WebhookEndpoint> {
  await validateEndpoint(input)
  return client.transaction(async (tx) => {
    await ensureWebhookSecret(tx, teamId)
    const enabled = input.enabled ?? true
    const { rows } = await tx.query<WebhookEndpoint>(
      `insert into public.webhook_endpoints (team_id, url, description, events, enabled, disabled_reason, disabled_at, created_by_api_key_id)
       values ($1, $2, $3, $4, $5, case when $5 then null else 'Created disabled' end, case when $5 then null else now() end, $6)
       returning ${endpointColumns}`,
      [teamId, input.url, input.description ?? '', [...new Set(input.events)], enabled, apiKeyId],
    )
    return rows[0]!
  })
}

/**
 * Changes an endpoint. Disabling records who did it as the reason; enabling clears the reason and
 * the failure streak, so the auto-disable clock starts again.
 */
export async function updateWebhookEndpoint(client: AuditedClient, teamId: string, endpointId: string, input: EndpointInput, actorName: string): Promise<WebhookEndpoint> {
  await validateEndpoint(input)
  const { rows } = await client.query<WebhookEndpoint>(
    `update public.webhook_endpoints
     set url = coalesce($3, url),
         description = coalesce($4, description),
         events = coalesce($5, events),
         enabled = coalesce($6, enabled),
         disabled_reason = case when $6 is null or $6 = enabled then disabled_reason when $6 then null else $7 end,
         disabled_at = case when $6 is null or $6 = enabled then disabled_at when $6 then null else now() end,
         failing_since = case when $6 and not enabled then null else failing_since end,
         updated_at = now()
     where id = $1 and team_id = $2
     returning ${endpointColumns}`,
    [endpointId, teamId, input.url ?? null, input.description ?? null, input.events ? [...new Set(input.events)] : null, input.enabled ?? null, `Disabled by ${actorName}`],
  )
  if (!rows[0]) throw notFound()
  return rows[0]
}

/** Deletes an endpoint and its deliveries. */
export async function deleteWebhookEndpoint(client: AuditedClient, teamId: string, endpointId: string): Promise<void> {
  const { rowCount } = await client.query('delete from public.webhook_endpoints where id = $1 and team_id = $2', [endpointId, teamId])
  if (!rowCount) throw notFound()
}

async function requireEnabledEndpoint(tx: Queryable, teamId: string, endpointId: string): Promise<void> {
  const { rows } = await tx.query<{ enabled: boolean }>('select enabled from public.webhook_endpoints where id = $1 and team_id = $2', [endpointId, teamId])
  if (!rows[0]) throw notFound()
  if (!rows[0].enabled) throw createError({ statusCode: 409, statusMessage: 'The endpoint is disabled; enable it first' })
}

/** Queues a `webhook.test` event for one endpoint, whatever its filter; 409 when it is disabled. */
export async function queueEndpointTest(client: AuditedClient, team: { id: string, name: string }, endpointId: string): Promise<string> {
  return client.transaction(async (tx) => {
    await requireEnabledEndpoint(tx, team.id, endpointId)
    await ensureWebhookSecret(tx, team.id)
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { team_id: team.id, team_name: team.name, endpoint_id: endpointId } })
    const { rows } = await tx.query<{ id: string }>(
      `insert into public.webhook_deliveries (team_id, endpoint_id, event, body) values ($1, $2, 'webhook.test', $3) returning id`,
      [team.id, endpointId, body],
    )
    return rows[0]!.id
  })
}

/** Queues again, with the same `webhook-id`s and a fresh retry schedule, the endpoint's failed deliveries created since `since`; returns how many. */
export async function recoverWebhookEndpoint(client: AuditedClient, teamId: string, endpointId: string, since: string): Promise<number> {
  return client.transaction(async (tx) => {
    await requireEnabledEndpoint(tx, teamId, endpointId)
    const { rowCount } = await tx.query(
      `update public.webhook_deliveries
       set status = 'pending', retry_step = 0, next_attempt_at = now(), locked_until = null, updated_at = now()
       where team_id = $1 and endpoint_id = $2 and status = 'failed' and created_at >= $3`,
      [teamId, endpointId, since],
    )
    return rowCount
  })
}

/**
 * Disables the endpoints `chosenSql` selects (`id` and `reason`, the text their page shows), and
 * stops their queued deliveries (they can be recovered once the endpoint is enabled again), in one
 * statement: the one way an endpoint is disabled by the app. The chosen rows are locked and read
 * again, so an endpoint changed meanwhile is judged as it is now. Returns the endpoints disabled.
 */
async function disableEndpoints(tx: Queryable, chosenSql: string, params: unknown[] = []): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    `with chosen as (${chosenSql}
       for update of e
     ),
     disabled as (
       update public.webhook_endpoints e
       set enabled = false, disabled_at = now(), updated_at = now(), disabled_reason = chosen.reason
       from chosen where e.id = chosen.id
       returning e.id, e.team_id
     ),
     stopped as (
       update public.webhook_deliveries d
       set status = 'failed', last_error = 'The endpoint was disabled', locked_until = null, updated_at = now()
       from disabled where d.team_id = disabled.team_id and d.endpoint_id = disabled.id and d.status = 'pending'
     )
     select id from disabled`,
    params,
  )
  return rows.map(row => row.id)
}

/**
 * Disables every endpoint that has failed each attempt for 5 days, with the reason, and stops its
 * queued deliveries (they can be recovered). Any instance may run it: a transaction-level advisory
 * lock lets one at a time do the work, the others return at once. Returns the endpoints disabled.
 */
export async function disableFailingEndpoints(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    const { rows: [lock] } = await tx.query<{ taken: boolean }>(`select pg_try_advisory_xact_lock(hashtext('webhooks.auto-disable')) as taken`)
    if (!lock?.taken) return []
    return disableEndpoints(tx, `
      select e.id, format('Disabled automatically: every delivery attempt failed for %s days (since %s UTC). Last error: %s',
          $1::int, to_char(e.failing_since at time zone 'UTC', 'YYYY-MM-DD HH24:MI'),
          (select coalesce(d.last_error, 'no answer') from public.webhook_deliveries d
           where d.endpoint_id = e.id and d.team_id = e.team_id and d.attempts > 0 order by d.updated_at desc limit 1)) as reason
      from public.webhook_endpoints e
      where e.enabled and e.failing_since <= now() - make_interval(days => $1::int)`, [autoDisableAfterDays])
  })
}

/**
 * Disables the enabled endpoints of the team that the key `keyId` made, the reason saying `why`
 * ("the API key "Zapier" that created it was revoked"), and stops their queued deliveries (they
 * can be recovered once an admin enables the endpoint again). Returns how many it disabled.
 */
export async function disableEndpointsOfKey(tx: Queryable, teamId: string, keyId: string, why: string): Promise<number> {
  const disabled = await disableEndpoints(tx, `
    select e.id, 'Disabled because ' || $3 as reason from public.webhook_endpoints e
    where e.team_id = $1 and e.created_by_api_key_id = $2 and e.enabled`, [teamId, keyId, why])
  return disabled.length
}

/**
 * Disables the endpoints made by keys that have expired (a revoked key's endpoints are disabled by
 * the revoke itself), once per key: only endpoints enabled before the key expired, so that an
 * endpoint an admin enabled again afterwards stays enabled. Runs with the auto-disable job, under
 * its own advisory lock. Returns the endpoints disabled.
 */
export async function disableEndpointsOfExpiredKeys(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    const { rows: [lock] } = await tx.query<{ taken: boolean }>(`select pg_try_advisory_xact_lock(hashtext('webhooks.expired-keys')) as taken`)
    if (!lock?.taken) return []
    return disableEndpoints(tx, `
      select e.id, format('Disabled because the API key "%s" that created it expired', k.name) as reason
      from public.webhook_endpoints e
      join public.api_keys k on k.id = e.created_by_api_key_id and k.team_id = e.team_id
      where e.enabled and k.revoked_at is null and k.expires_at <= now()
        and coalesce(e.updated_at, e.created_at) < k.expires_at`)
  })
}
