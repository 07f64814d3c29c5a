// The outbox: queues webhook events in the caller's transaction and manages secrets and deliveries.
import { randomBytes } from 'node:crypto'
import type { WebhookDelivery } from '#shared/types/webhooks'
import type { AuditedClient } from '../db/audited-client'
import type { Queryable } from '../db/db-drivers'

export type WebhookEvent = 'invitation.created' | 'invitation.accepted' | 'invitation.revoked' | 'webhook.test'

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** Creates the team's signing secret unless it has one (teams made before this feature, or by seed SQL). */
export async function ensureWebhookSecret(tx: Queryable, teamId: string): Promise<void> {
  await tx.query('insert into public.webhook_secrets (team_id, secret) values ($1, $2) on conflict (team_id) do nothing', [teamId, newSecret()])
}

/**
 * Queues `event` in the caller's transaction (the outbox), so the delivery exists exactly when the
 * change that fired it is committed: one for the team's webhook_url (the invitation receiver) and
 * one per enabled endpoint subscribed to the event. Returns the webhook_url delivery's id (its
 * `webhook-id`), or null when the team has no webhook_url.
 */
export async function fireWebhook(tx: Queryable, teamId: string, event: WebhookEvent, data: Record<string, unknown>): Promise<string | null> {
  const body = JSON.stringify({ type: event, timestamp: new Date().toISOString(), data })
  const { rows } = await tx.query<{ id: string, endpoint_id: string | null }>(
    `insert into public.webhook_deliveries (team_id, endpoint_id, event, body)
     select id, null::uuid, $2::text, $3::text from public.teams where id = $1 and webhook_url is not null
     union all
     select team_id, id, $2, $3 from public.webhook_endpoints
     where team_id = $1 and enabled and $2 <> 'webhook.test' and ($2 = any (events) or '*' = any (events))
     returning id, endpoint_id`,
    [teamId, event, body],
  )
  if (rows.length) await ensureWebhookSecret(tx, teamId)
  return rows.find(row => row.endpoint_id === null)?.id ?? null
}

/** The team's signing secret. */
export async function getWebhookSecret(client: AuditedClient, teamId: string): Promise<string> {
  return client.transaction(async (tx) => {
    await ensureWebhookSecret(tx, teamId)
    const { rows } = await tx.query<{ secret: string }>('select secret from public.webhook_secrets where team_id = $1', [teamId])
    return rows[0]!.secret
  })
}

/**
 * Replaces the team's signing secret. Deliveries from now on (retries included) are signed with the
 * new one and, for 24 hours, also with the old one, so receivers can switch without losing events.
 */
export async function rotateWebhookSecret(client: AuditedClient, teamId: string): Promise<string> {
  const { rows } = await client.query<{ secret: string }>(
    `insert into public.webhook_secrets (team_id, secret) values ($1, $2)
     on conflict (team_id) do update set secret = excluded.secret, rotated_at = now(),
       previous_secret = webhook_secrets.secret, previous_expires_at = now() + interval '24 hours'
     returning secret`,
    [teamId, newSecret()],
  )
  return rows[0]!.secret
}

/** The most recent deliveries to one endpoint (null: the team's webhook_url), newest first, each with its attempts. */
export async function listWebhookDeliveries(client: AuditedClient, teamId: string, endpointId: string | null = null, limit = 50): Promise<WebhookDelivery[]> {
  const { rows } = await client.read<WebhookDelivery>(
    `select d.id, d.endpoint_id, d.event, d.status, d.attempts, d.last_status_code, d.last_error,
            case when d.status in ('pending', 'delivering') then d.next_attempt_at end as next_attempt_at, d.created_at,
            coalesce((select json_agg(json_build_object(
                        'attempt', a.attempt, 'status_code', a.status_code, 'error', a.error, 'duration_ms', a.duration_ms,
                        'response_body', a.response_body, 'created_at', a.created_at) order by a.attempt)
                      from public.webhook_attempts a where a.delivery_id = d.id and a.team_id = $1), '[]'::json) as attempts_list
     from public.webhook_deliveries d
     where d.team_id = $1 and d.endpoint_id is not distinct from $2::uuid
     order by d.created_at desc, d.id
     limit $3`,
    [teamId, endpointId, limit],
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
    const { rows } = await tx.query<{ status: string, endpoint_id: string | null, endpoint_enabled: boolean | null }>(
      `select d.status, d.endpoint_id, e.enabled as endpoint_enabled
       from public.webhook_deliveries d left join public.webhook_endpoints e on e.id = d.endpoint_id and e.team_id = d.team_id
       where d.id = $1 and d.team_id = $2 for update of d`,
      [deliveryId, teamId],
    )
    if (!rows[0]) throw createError({ statusCode: 404, statusMessage: 'Delivery not found' })
    if (rows[0].endpoint_id === null) await requireWebhookUrl(tx, teamId)
    else if (!rows[0].endpoint_enabled) throw createError({ statusCode: 409, statusMessage: 'The endpoint is disabled; enable it first' })
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
