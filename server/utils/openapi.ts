import { z } from 'zod'
import { PageQuery } from '#shared/utils/patterns'
import { scopeAllows, webhooksScopeAllows, type ApiKeyScopes } from '#shared/utils/api-keys'
import { CreateWebhookEndpointBody, UpdateWebhookEndpointBody } from '#shared/utils/schemas'
import { joinedNames, recordSchemas } from './records'
import type { ColumnInfo, TableInfo } from './table-registry'
import { columnValueType, type JsonSchema } from './column-types'

/** The JSON Schema of a column's value in an answer. */
export function columnSchema(column: ColumnInfo): JsonSchema {
  const schema: JsonSchema = { ...columnValueType(column).json }
  if (column.comment) schema.description = column.comment
  if (column.nullable && schema.type) schema.type = [schema.type, 'null']
  return schema
}

/** The schema of a record; `partial` for a list's, whose `select` may leave columns out. */
function recordSchema(table: TableInfo, registry: Map<string, TableInfo>, partial = false): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const column of table.columns) properties[column.name] = columnSchema(column)
  for (const join of joinedNames(table, registry)) {
    properties[join.alias] = { type: ['string', 'null'], description: `${join.nameColumn} of the ${join.target} record in ${join.column}` }
  }
  if (partial) return { type: 'object', description: `A ${table.name} record in a list: every column, or those chosen with select`, properties }
  return { type: 'object', description: table.comment ?? undefined, properties, required: table.columns.map(c => c.name) }
}

function bodySchema(schema: z.ZodObject): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema
  return rest
}

/** limit and offset as query parameters, from the schema that validates them. */
function pageParameters() {
  const { properties } = bodySchema(PageQuery) as { properties: Record<string, JsonSchema> }
  return Object.entries(properties).map(([name, schema]) => ({ name, in: 'query', schema }))
}

const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema })

/** Headers of every answer of a key: its rate limit. */
const rateLimitHeaders = {
  'RateLimit-Limit': header('Requests the key may make per window', { type: 'integer' }),
  'RateLimit-Remaining': header('Requests left in the current window', { type: 'integer' }),
  'RateLimit-Reset': header('Seconds until the window resets', { type: 'integer' }),
}

const errorResponse = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { ...rateLimitHeaders, ...headers },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

const parameter = (name: string, where: 'query' | 'header', description: string, schema: JsonSchema = { type: 'string' }) =>
  ({ name, in: where, required: false, description, schema })

/** The query parameters of a list: filters on every column, order, select, page size, offset or cursor. */
function listParameters(table: TableInfo) {
  const filters = table.columns.map(column => parameter(column.name, 'query',
    `Filter on ${column.name}: \`<op>.<value>\` with op one of eq, neq, gt, gte, lt, lte, like, ilike (* is the wildcard), in.(a,b), is.null|true|false, or not.<op>.<value>. Give it twice for a range.`))
  return [
    ...pageParameters(),
    parameter('cursor', 'query', 'The opaque cursor of the next page, from the Link header; not with offset'),
    parameter('order', 'query', '<column>.asc|desc[,<column>.asc|desc]; default created_at.desc; nulls last in both directions; the id breaks ties'),
    parameter('select', 'query', 'Comma-separated columns to answer (plus the joined name of a chosen foreign key)'),
    parameter('Prefer', 'header', 'count=exact adds Content-Range with the total'),
    ...filters,
  ]
}

const idempotencyKey = parameter('Idempotency-Key', 'header', 'Retry safely: within 24 hours the same key and request answer the first answer again', { type: 'string', minLength: 1, maxLength: 255 })
const ifMatch = parameter('If-Match', 'header', 'Write only if the record\'s current ETag is this one (else 412)')

/** The paths of one table: reading operations, and writing ones when `writable`. */
function tablePaths(table: TableInfo, writable: boolean) {
  const ref = { $ref: `#/components/schemas/${table.name}` }
  const createRef = { $ref: `#/components/schemas/${table.name}_create` }
  const record = { 'application/json': { schema: ref } }
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }
  const etag = { ETag: header('The record\'s version, for If-Match and If-None-Match') }
  const common = {
    401: errorResponse('Missing, malformed, unknown, revoked or expired API key'),
    403: errorResponse(`The key's scopes lack the access to ${table.name} this operation needs`),
    429: errorResponse('Over the rate limit; nothing was done', { 'Retry-After': header('Seconds to wait', { type: 'integer' }) }),
  }
  const writeErrors = {
    409: errorResponse('A unique value is taken, or a request with the same Idempotency-Key is still running'),
    422: errorResponse('The Idempotency-Key was used for a different request'),
  }
  const replayed = { 'Idempotent-Replayed': header('true when this is the stored answer of an earlier request with the same Idempotency-Key') }
  const notFound = errorResponse('Not a record of the key\'s team')
  const writes = <T>(operations: T): T | Record<string, never> => (writable ? operations : {})
  return {
    [`/api/v1/${table.name}`]: {
      get: {
        operationId: `list_${table.name}`,
        summary: `List the team's ${table.name}: filters, order, columns, cursor pages and counts`,
        parameters: listParameters(table),
        responses: {
          200: {
            description: 'The records',
            headers: {
              ...rateLimitHeaders,
              'Link': header('<...&cursor=...>; rel="next" when the page is full'),
              'Content-Range': header('<first>-<last>/<total> (or */<total>) with Prefer: count=exact'),
              'Preference-Applied': header('count=exact when the total was counted'),
            },
            content: { 'application/json': { schema: { type: 'array', items: { $ref: `#/components/schemas/${table.name}_listed` } } } },
          },
          400: errorResponse('An unknown column, operator, value, order, select, a bad limit or offset, or a forged cursor (the message names it)'),
          ...common,
        },
      },
      ...writes({
        post: {
          operationId: `create_${table.name}`,
          summary: `Create a ${table.name} record, or 1 to 100 of them all or none`,
          parameters: [idempotencyKey],
          requestBody: { required: true, content: { 'application/json': { schema: { oneOf: [createRef, { type: 'array', items: createRef, minItems: 1, maxItems: 100 }] } } } },
          responses: {
            201: { description: 'The created record, or the records in the order given', headers: { ...rateLimitHeaders, ...replayed }, content: { 'application/json': { schema: { oneOf: [ref, { type: 'array', items: ref }] } } } },
            400: errorResponse('Invalid field (the message names it, and the element of an array: [3].title)'),
            ...writeErrors,
            ...common,
          },
        },
      }),
    },
    [`/api/v1/${table.name}/{id}`]: {
      parameters: [idParameter],
      get: {
        operationId: `get_${table.name}`,
        summary: `One ${table.name} record`,
        parameters: [parameter('If-None-Match', 'header', 'Answer 304 if the record still has this ETag')],
        responses: {
          200: { description: 'The record', headers: { ...rateLimitHeaders, ...etag }, content: record },
          304: { description: 'Not modified since the ETag given in If-None-Match', headers: { ...rateLimitHeaders, ...etag } },
          404: notFound,
          ...common,
        },
      },
      ...writes({
        patch: {
          operationId: `update_${table.name}`,
          summary: `Change columns of a ${table.name} record`,
          parameters: [ifMatch, idempotencyKey],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${table.name}_update` } } } },
          responses: {
            200: { description: 'The updated record', headers: { ...rateLimitHeaders, ...etag, ...replayed }, content: record },
            400: errorResponse('Invalid field (the message names it)'),
            404: notFound,
            412: errorResponse('If-Match does not match the record\'s current ETag; nothing was written'),
            ...writeErrors,
            ...common,
          },
        },
        delete: {
          operationId: `delete_${table.name}`,
          summary: `Delete a ${table.name} record`,
          parameters: [ifMatch, idempotencyKey],
          responses: {
            204: { description: 'Deleted', headers: { ...rateLimitHeaders, ...replayed } },
            404: notFound,
            412: errorResponse('If-Match does not match the record\'s current ETag; nothing was deleted'),
            ...writeErrors,
            ...common,
          },
        },
      }),
    },
  }
}

/**
 * The OpenAPI 3.1 document of the public API, with the bearer scheme: every route of every domain
 * table, or, given a key's scopes, only the operations that key may call.
 */
export function openApiDocument(registry: Map<string, TableInfo>, baseUrl?: string, scopes?: ApiKeyScopes): JsonSchema {
  const tables = [...registry.values()]
    .filter(table => table.isDomain && (!scopes || scopeAllows(scopes, table.name, 'read')))
    .sort((a, b) => a.name.localeCompare(b.name))
  const schemas: Record<string, JsonSchema> = {
    Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
  }
  let paths: Record<string, unknown> = {}
  for (const table of tables) {
    const writable = !scopes || scopeAllows(scopes, table.name, 'write')
    schemas[table.name] = recordSchema(table, registry)
    schemas[`${table.name}_listed`] = recordSchema(table, registry, true)
    if (writable) {
      const { create, update } = recordSchemas(table)
      schemas[`${table.name}_create`] = bodySchema(create)
      schemas[`${table.name}_update`] = bodySchema(update)
    }
    paths = { ...paths, ...tablePaths(table, writable) }
  }
  Object.assign(schemas, webhookEndpointSchemas())
  paths = { ...paths, ...webhookEndpointPaths(scopes) }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Team Workspace public API',
      version: 'v1',
      description: 'Read and write a team\'s data with a bearer API key (Settings > API Keys). Every request is scoped to the key\'s team.',
    },
    ...(baseUrl ? { servers: [{ url: baseUrl }] } : {}),
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key of the team' } },
      schemas,
    },
  }
}

/** The schemas of the webhook-endpoints routes: an endpoint, the create answer (with the secret) and the bodies. */
function webhookEndpointSchemas(): Record<string, JsonSchema> {
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
function webhookEndpointPaths(scopes?: ApiKeyScopes): Record<string, unknown> {
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
