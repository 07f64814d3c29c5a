import { z } from 'zod'
import { PageQuery } from '#shared/utils/patterns'
import { scopeAllows, webhooksScopeAllows, type ApiKeyScopes } from '#shared/utils/api-keys'
import { CreateWebhookEndpointBody, UpdateWebhookEndpointBody } from '#shared/utils/schemas'
import { joinedNames, recordSchemas } from '../records/records'
import type { ColumnInfo, TableInfo } from '../records/table-registry'
import { columnValueType, type JsonSchema } from '../records/column-types'

/** The JSON Schema of a column's value in an answer. */
export function columnSchema(column: ColumnInfo): JsonSchema {
  const schema: JsonSchema = { ...columnValueType(column).json }
  if (column.comment) schema.description = column.comment
  if (column.nullable && schema.type) schema.type = [schema.type, 'null']
  return schema
}

/**
 * The bounds of a single-column range CHECK, as pg_get_constraintdef renders `priority between 1 and 5`:
 * `CHECK (((priority >= 1) AND (priority <= 5)))`; null for any other CHECK.
 */
export function checkRange(definition: string): { column: string, bounds: JsonSchema } | null {
  const body = /^CHECK \((.*)\)$/s.exec(definition)?.[1]
  if (!body) return null
  const parts = body.replace(/^\((.*)\)$/s, '$1').split(/\) AND \(/).map(part => part.replace(/^\(+|\)+$/g, ''))
  const keywords: Record<string, string> = { '>=': 'minimum', '<=': 'maximum', '>': 'exclusiveMinimum', '<': 'exclusiveMaximum' }
  const bounds: JsonSchema = {}
  let column: string | undefined
  for (const part of parts) {
    const match = /^"?([a-z_][a-z0-9_]*)"? (>=|<=|>|<) \(?(-?\d+(?:\.\d+)?)\)?(?:::[a-z ]+)?$/i.exec(part)
    if (!match || (column && column !== match[1])) return null
    column = match[1]!
    bounds[keywords[match[2]!]!] = Number(match[3])
  }
  return column ? { column, bounds } : null
}

/** Adds the bounds of the table's single-column range CHECKs to the properties of a schema (`priority`: 1 to 5). */
function withRanges(table: TableInfo, schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  for (const check of table.checks) {
    const range = check.columns.length === 1 ? checkRange(check.definition) : null
    const property = range && properties?.[range.column]
    if (property) Object.assign(property, range.bounds)
  }
  return schema
}

/** The schema of a record; `partial` for a list's, whose `select` may leave columns out. */
function recordSchema(table: TableInfo, registry: Map<string, TableInfo>, partial = false): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const column of table.columns) properties[column.name] = columnSchema(column)
  for (const join of joinedNames(table, registry)) {
    properties[join.alias] = { type: ['string', 'null'], description: `${join.nameColumn} of the ${join.target} record in ${join.column}` }
  }
  if (partial) return withRanges(table, { type: 'object', description: `A ${table.name} record in a list: every column, or the items chosen with select (renamed columns, embedded tables)`, properties })
  return withRanges(table, { type: 'object', description: table.comment ?? undefined, properties, required: table.columns.map(c => c.name) })
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

const selectParameter = parameter('select', 'query', '`*`, columns, `alias:column`, and related tables through their foreign keys: `project:projects(name)` (many-to-one), `tasks(*)` (one-to-many), `profiles!created_by(*)` (id and name only); only the key\'s team\'s rows of tables its scopes let it read. A chosen foreign key column also brings its joined name')

/** The filters of a table: `<column>=<op>.<value>` on each column, and `or`/`and` trees. */
function filterParameters(table: TableInfo) {
  return [
    ...table.columns.map(column => parameter(column.name, 'query',
      `Filter on ${column.name}: \`<op>.<value>\` with op one of eq, neq, gt, gte, lt, lte, like, ilike (* and % are wildcards), match, imatch (regular expressions), in.(a,b), is.null|true|false, isdistinct${['text', 'character varying'].includes(column.type) ? ', fts, plfts, phfts, wfts (full-text search, optionally with a configuration: fts(english).word)' : ''}, or not.<op>.<value>. Give it twice for a range.`)),
    parameter('or', 'query', 'Any of the conditions: `(status.eq.done,priority.lt.3)`; nests `and(...)`, `or(...)` and `not.`; also `not.or`'),
    parameter('and', 'query', 'All of the conditions: `(priority.gte.2,priority.lte.4)`; nests as `or` does; also `not.and`'),
  ]
}

/** The query parameters of a list: filters on every column, order, select, page size, offset or cursor. */
function listParameters(table: TableInfo) {
  return [
    ...pageParameters().map(p => p.name === 'limit' ? { ...p, description: 'Rows per page (default 50); over 100 is served as 100' } : p),
    parameter('cursor', 'query', 'The opaque cursor of the next page, from the Link header; not with offset'),
    parameter('order', 'query', '<column>[.asc|.desc][.nullsfirst|.nullslast][,...]; default created_at.desc; nulls last unless nullsfirst; the id breaks ties; cursors keep the order'),
    selectParameter,
    parameter('Prefer', 'header', 'count=exact|planned|estimated adds the total to Content-Range (planned: the planner\'s estimate; estimated: exact up to 1000 rows, planned above)'),
    acceptParameter,
    ...filterParameters(table),
  ]
}

const acceptParameter = parameter('Accept', 'header', 'application/json (default), application/vnd.pgrst.object+json (one object; 406 PGRST116 unless exactly one row) or text/csv; anything else is a 406')

const idempotencyKey = parameter('Idempotency-Key', 'header', 'Retry safely: within 24 hours the same key and request (method, path, query string and body) answer the first answer again', { type: 'string', minLength: 1, maxLength: 255 })
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
  const rows = { type: 'array', items: { $ref: `#/components/schemas/${table.name}_listed` } }
  const listContent = {
    'application/json': { schema: rows },
    'application/vnd.pgrst.object+json': { schema: { $ref: `#/components/schemas/${table.name}_listed` } },
    'text/csv': { schema: { type: 'string' } },
  }
  const listHeaders = {
    ...rateLimitHeaders,
    'Link': header('<absolute URL with &cursor=...>; rel="next" when the page is full'),
    'Content-Range': header('<first>-<last>/<total or *> (0-based positions; */<total> when empty); the total with Prefer: count=...'),
    'Preference-Applied': header('The preferences honoured, e.g. count=exact'),
  }
  const notAcceptable = errorResponse('The Accept header asks for a format the API cannot produce (PGRST107), or one object when the rows are not exactly one (PGRST116)')
  const filteredWrite = (method: 'patch' | 'delete') => ({
    operationId: `${method === 'patch' ? 'update' : 'delete'}_${table.name}_where`,
    summary: `${method === 'patch' ? 'Change' : 'Delete'} the team's ${table.name} records that the filters match (a filter is required; at most 100 rows)`,
    parameters: [
      ...filterParameters(table),
      selectParameter,
      parameter('Prefer', 'header', 'return=representation answers the changed records; handling=strict with max-affected=N refuses more than N rows; tx=rollback runs and rolls back (a dry run)'),
      acceptParameter,
      idempotencyKey,
    ],
    ...(method === 'patch' ? { requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${table.name}_update` } } } } } : {}),
    responses: {
      200: { description: 'The changed records (with Prefer: return=representation)', headers: { ...rateLimitHeaders, ...replayed }, content: listContent },
      204: { description: `${method === 'patch' ? 'Changed' : 'Deleted'}; each row has its activity entry and record event`, headers: { ...rateLimitHeaders, ...replayed } },
      400: errorResponse('No filter, an invalid filter or field, more than 100 matching rows, or more than max-affected (PGRST124); nothing was changed'),
      406: notAcceptable,
      ...writeErrors,
      ...common,
    },
  })
  return {
    [`/api/v1/${table.name}`]: {
      get: {
        operationId: `list_${table.name}`,
        summary: `List the team's ${table.name}: filters, order, columns, cursor pages and counts`,
        parameters: listParameters(table),
        responses: {
          200: { description: 'The records', headers: listHeaders, content: listContent },
          300: errorResponse('An embedding matches more than one foreign key (PGRST201): name it with table!column(...)'),
          400: errorResponse('An unknown column, operator, value, order, select or relation (PGRST200), a bad limit or offset, or a forged cursor (the message names it)'),
          406: notAcceptable,
          ...common,
        },
      },
      head: {
        operationId: `head_${table.name}`,
        summary: `The headers of the list of ${table.name} (Content-Range with the count under Prefer: count=...), without a body`,
        parameters: listParameters(table),
        responses: { 200: { description: 'The headers of the list', headers: listHeaders }, ...common },
      },
      ...writes({
        post: {
          operationId: `create_${table.name}`,
          summary: `Create a ${table.name} record, or 1 to 100 of them all or none; or upsert them by id`,
          parameters: [
            idempotencyKey,
            parameter('Prefer', 'header', 'return=representation answers an array (as select asks), return=minimal no body, none the created record (or array) as sent; resolution=merge-duplicates|ignore-duplicates upserts by id (an id may then be sent; another team\'s id is a 409 saying it is taken); missing=default; tx=rollback runs and rolls back (a dry run)'),
            parameter('on_conflict', 'query', 'The unique key of an upsert: id'),
            parameter('columns', 'query', 'The columns the records set ("a","b"); a record lacking one sets it to null unless Prefer: missing=default'),
            selectParameter,
            acceptParameter,
          ],
          requestBody: { required: true, content: { 'application/json': { schema: { oneOf: [createRef, { type: 'array', items: createRef, minItems: 1, maxItems: 100 }] } } } },
          responses: {
            201: {
              description: 'The created record, or the records in the order given; an array under Prefer: return=representation; no body under return=minimal',
              headers: { ...rateLimitHeaders, ...replayed, ETag: header('The version of a single created record (without Prefer)') },
              content: { 'application/json': { schema: { oneOf: [ref, { type: 'array', items: ref }] } } },
            },
            400: errorResponse('Invalid field (the message names it, and the element of an array: [3].title)'),
            406: notAcceptable,
            ...writeErrors,
            ...common,
          },
        },
        patch: filteredWrite('patch'),
        delete: filteredWrite('delete'),
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
    Error: {
      type: 'object',
      description: 'PostgREST\'s error shape, plus error (the message again)',
      properties: {
        error: { type: 'string' },
        message: { type: 'string' },
        code: { type: 'string', description: 'PostgreSQL\'s SQLSTATE where the database refused, PostgREST\'s PGRST... code where it has one, else this API\'s own' },
        details: { type: ['string', 'null'] },
        hint: { type: ['string', 'null'] },
        request_id: { type: 'string', description: 'The answer\'s Request-Id (req_...), to quote when asking about this request' },
      },
      required: ['error', 'code', 'message', 'details', 'hint'],
    },
  }
  let paths: Record<string, unknown> = {}
  for (const table of tables) {
    const writable = !scopes || scopeAllows(scopes, table.name, 'write')
    schemas[table.name] = recordSchema(table, registry)
    schemas[`${table.name}_listed`] = recordSchema(table, registry, true)
    if (writable) {
      const { create, update } = recordSchemas(table)
      schemas[`${table.name}_create`] = withRanges(table, bodySchema(create))
      schemas[`${table.name}_update`] = withRanges(table, bodySchema(update))
    }
    paths = { ...paths, ...tablePaths(table, writable) }
  }
  Object.assign(schemas, webhookEndpointSchemas())
  paths = { ...paths, ...webhookEndpointPaths(scopes) }
  schemas.change_event = changeEventSchema()
  paths = { ...paths, ...changeFeedPaths() }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Team Workspace public API',
      version: 'v1',
      description: 'Read and write a team\'s data with an API key (Settings > API Keys), as a bearer token or in an apikey header. Every request is scoped to the key\'s team. The API speaks PostgREST\'s protocol: every path under /api/v1 also answers under /rest/v1, where supabase-js and other PostgREST clients look for it; /rest/v1/rpc/* and /api/v1/rpc/* are 404 (no functions are exposed).',
    },
    ...(baseUrl ? { servers: [{ url: baseUrl, description: 'This app; /api/v1 and its alias /rest/v1' }] } : {}),
    security: [{ apiKey: [] }, { apikeyHeader: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key of the team' },
        apikeyHeader: { type: 'apiKey', in: 'header', name: 'apikey', description: 'The same key in an apikey header (what supabase-js sends)' },
      },
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

/** One event of the change feed: the webhook payload's type and data, with who and from where. */
function changeEventSchema(): JsonSchema {
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
function changeFeedPaths(): Record<string, unknown> {
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
