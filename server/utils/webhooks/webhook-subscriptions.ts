// Webhook endpoints managed with an API key (REST hooks): automation tools subscribe and unsubscribe
// themselves through /api/v1/webhook-endpoints, with the services of Settings > Webhooks.
import type { H3Event } from 'h3'
import type { WebhookEndpoint } from '#shared/types/webhooks'
import { webhooksScope, webhooksScopeAllows, type ApiKeyAccess } from '#shared/utils/api-keys'
import type { AuthenticatedKey } from '../credentials/api-keys'
import type { AuditedClient } from '../db/audited-client'
import { authApiKey } from '../credentials/api-keys'
import { createWebhookEndpoint } from './webhooks-endpoints'
import { getWebhookSecret } from './webhooks'

/**
 * Authenticates the bearer key (401) and checks that its own `webhooks` scope gives it `needed`
 * access (403 naming it); "*" is every table, not the webhook endpoints.
 */
export async function authApiWebhooks(event: H3Event, needed: ApiKeyAccess): Promise<{ apiKey: AuthenticatedKey, client: AuditedClient, teamId: string }> {
  const { apiKey, client } = await authApiKey(event)
  if (!webhooksScopeAllows(apiKey.scopes, needed)) {
    throw createError({ statusCode: 403, statusMessage: `This API key may not ${needed} webhook endpoints (its scopes lack "${webhooksScope}": "${needed}")` })
  }
  return { apiKey, client, teamId: apiKey.team_id }
}

/** What a create answers: the endpoint and the team's signing secret, which no other answer of this API holds. */
export type SubscribedWebhookEndpoint = WebhookEndpoint & { secret: string }

/** Subscribes an endpoint for the key's team, marked as made by the key, and answers it with the signing secret. */
export async function subscribeWebhookEndpoint(client: AuditedClient, apiKey: AuthenticatedKey, input: Parameters<typeof createWebhookEndpoint>[2]): Promise<SubscribedWebhookEndpoint> {
  const endpoint = await createWebhookEndpoint(client, apiKey.team_id, input, apiKey.id)
  return { ...endpoint, secret: await getWebhookSecret(client, apiKey.team_id) }
}

/** How a key is named in the reason of an endpoint it disabled: `the API key "<name>"`. */
export async function apiKeyActorName(client: AuditedClient, apiKey: AuthenticatedKey): Promise<string> {
  const { rows } = await client.read<{ name: string }>('select name from public.api_keys where id = $1 and team_id = $2', [apiKey.id, apiKey.team_id])
  return `the API key "${rows[0]?.name ?? apiKey.id}"`
}
