// The paths of the public API that are not a table's: the webhook endpoints (REST hooks) and the
// change feed, with their schemas.
import { webhooksScopeAllows, type ApiKeyScopes } from '#shared/utils/api-keys'
import { CreateWebhookEndpointBody, UpdateWebhookEndpointBody } from '#shared/utils/schemas'
import type { JsonSchema } from '../records/column-types'
import { bodySchema, errorResponse, header, parameter, rateLimitHeaders } from './openapi-parts'

/** The schemas of the webhook-endpoints routes: an endpoint, the create answer (with the secret) and the bodies. */
export function webhookEndpointSchemas(): Record<string, JsonSchema> {
  const nullableString = { type: ['string', 'null'] }
  const endpoint = {
    type: 'object',
    description: 'A webhook endpoint of the team: where its events go and which ones',
    properties: {
      id: { type: 'string', format: 'uuid' },
      url: { type: 'string', format: 'uri' },
      description: { type: 'string' },
      events: { type: 'array', items: { type: 'string' }, description: 'Event types (`<table>.created|updated|deleted`, `invitation.*`) or "*"' },
      enabled: { type: 'boolean' },
      disabled_reason: nullableString,
      disabled_at: { ...nullableString, format: 'date-time' },
      failing_since: { ...nullableString, format: 'date-time' },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
      created_by_api_key_id: { ...nullableString, format: 'uuid', description: 'The API key that subscribed it; null when made in Settings > Webhooks' },
      created_by_api_key_name: nullableString,
    },
  }
  return {
    webhook_endpoint: endpoint,
    webhook_endpoint_created: {
      ...endpoint,
      properties: { ...endpoint.properties, secret: { type: 'string', description: 'The team\'s signing secret (whsec_...), in this answer only: verify each delivery\'s webhook-signature with it' } },
    },
    webhook_endpoint_create: bodySchema(CreateWebhookEndpointBody),
    webhook_endpoint_update: bodySchema(UpdateWebhookEndpointBody),
  }
}

/**
 * The webhook-endpoints routes (REST hooks): subscribing needs the key's own `webhooks` scope,
 * "read" for GET and "write" for the rest; given a key's scopes, only those it may call.
 */
export function webhookEndpointPaths(scopes?: ApiKeyScopes): Record<string, unknown> {
  const canRead = !scopes || webhooksScopeAllows(scopes, 'read')
  const canWrite = !scopes || webhooksScopeAllows(scopes, 'write')
  if (!canRead) return {}
  const json = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } })
  const ok = (description: string, name: string) => ({ description, headers: rateLimitHeaders, content: json(name) })
  const common = {
    401: errorResponse('No key, or an unknown, revoked or expired one', { 'WWW-Authenticate': header('Bearer') }),
    403: errorResponse('The key\'s scopes lack "webhooks" with the access this operation needs'),
    429: errorResponse('Over the key\'s rate limit; nothing was done', { 'Retry-After': header('Seconds to wait', { type: 'integer' }) }),
  }
  const notFound = errorResponse('No endpoint with that id in the key\'s team')
  const invalid = errorResponse('The body is invalid (a field, an unknown event type, or a URL that points at a private address); nothing was written')
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }
  const tag = ['webhook endpoints']
  return {
    '/api/v1/webhook-endpoints': {
      get: { operationId: 'list_webhook_endpoints', tags: tag, summary: 'List the team\'s webhook endpoints', responses: { 200: { description: 'The endpoints, oldest first', headers: rateLimitHeaders, content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/webhook_endpoint' } } } } }, ...common } },
      ...(canWrite
        ? { post: { operationId: 'create_webhook_endpoint', tags: tag, summary: 'Subscribe an endpoint to events', requestBody: { required: true, content: json('webhook_endpoint_create') }, responses: { 201: ok('Subscribed; the answer holds the signing secret, this once', 'webhook_endpoint_created'), 400: invalid, ...common } } }
        : {}),
    },
    '/api/v1/webhook-endpoints/{id}': {
      get: { operationId: 'get_webhook_endpoint', tags: tag, parameters: [idParameter], summary: 'One webhook endpoint', responses: { 200: ok('The endpoint', 'webhook_endpoint'), 404: notFound, ...common } },
      ...(canWrite
        ? {
            patch: { operationId: 'update_webhook_endpoint', tags: tag, parameters: [idParameter], summary: 'Change an endpoint\'s URL, description, events or enabled', requestBody: { required: true, content: json('webhook_endpoint_update') }, responses: { 200: ok('The changed endpoint', 'webhook_endpoint'), 400: invalid, 404: notFound, ...common } },
            delete: { operationId: 'delete_webhook_endpoint', tags: tag, parameters: [idParameter], summary: 'Unsubscribe: delete the endpoint and its deliveries', responses: { 204: { description: 'Deleted', headers: rateLimitHeaders }, 404: notFound, ...common } },
          }
        : {}),
    },
  }
}

/** One event of the change feed: the webhook payload's type and data, with who and from where. */
export function changeEventSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'A record event: the same type and data as the webhook payloads',
    properties: {
      id: { type: 'string', description: 'Opaque; ids sort in the feed\'s order. Pass it as after (or Last-Event-ID) to continue from here' },
      type: { type: 'string', description: '<table>.created, <table>.updated or <table>.deleted' },
      created_at: { type: 'string', format: 'date-time' },
      data: { type: 'object', description: 'The record\'s columns; an update adds previous, the old values of the columns it changed', additionalProperties: true },
      actor_id: { type: ['string', 'null'], format: 'uuid', description: 'Who made the change (a key\'s creator for the API)' },
      source: { type: 'string', enum: ['web', 'api', 'chat', 'mcp', 'system'] },
    },
    required: ['id', 'type', 'created_at', 'data', 'actor_id', 'source'],
  }
}

/** GET /api/v1/events and its stream: the key\'s team\'s record events of the tables it may read. */
export function changeFeedPaths(): Record<string, unknown> {
  const tag = ['events']
  const common = {
    400: errorResponse('A malformed after, types or limit'),
    401: errorResponse('No key, or an unknown, revoked or expired one', { 'WWW-Authenticate': header('Bearer') }),
    429: errorResponse('Over the key\'s rate limit (or, for the stream, 10 streams of the key open already)', { 'Retry-After': header('Seconds to wait', { type: 'integer' }) }),
  }
  const after = parameter('after', 'query', 'Continue after this event id (0: from the oldest kept). Never skips an event: one is listed only once every transaction that could precede it has ended')
  const types = parameter('types', 'query', 'Only these event types, comma-separated: tasks.created,tasks.updated')
  return {
    '/api/v1/events': {
      get: {
        operationId: 'list_events',
        tags: tag,
        summary: 'Record events, oldest first',
        description: 'The events of the tables the key may read, kept as long as the team\'s activity log. Follow the Link header (rel="next") to continue; an empty page means nothing new yet.',
        parameters: [after, types, parameter('limit', 'query', 'Events per page, 1 to 100 (default 50)', { type: 'integer', minimum: 1, maximum: 100, default: 50 })],
        responses: {
          200: {
            description: 'The events after the cursor',
            headers: { ...rateLimitHeaders, Link: header('<...>; rel="next": the next page') },
            content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/change_event' } } } },
          },
          ...common,
        },
      },
    },
    '/api/v1/events/stream': {
      get: {
        operationId: 'stream_events',
        tags: tag,
        summary: 'Record events as Server-Sent Events',
        description: 'Replays the events after Last-Event-ID (or after), then sends each new one as it commits: id: the event id, event: its type, data: the event JSON. A comment every 15 s keeps it open. At most 10 open streams per key; the stream ends when the key is revoked.',
        parameters: [after, types, parameter('Last-Event-ID', 'header', 'Resume after this event id (what EventSource sends when it reconnects); wins over after')],
        responses: {
          200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...common,
        },
      },
    },
  }
}
