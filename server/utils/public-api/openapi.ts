// The OpenAPI 3.1 document of the public API: each domain table's paths and schemas (its pieces in
// openapi-parts.ts, the webhook endpoints' and the change feed's paths in openapi-other-paths.ts).
import { PageQuery } from '#shared/utils/patterns'
import { scopeAllows, type ApiKeyScopes } from '#shared/utils/api-keys'
import { recordSchemas } from '../records/record-input'
import type { TableInfo } from '../records/table-registry'
import type { JsonSchema } from '../records/column-types'
import { bodySchema, errorResponse, header, parameter, rateLimitHeaders, recordSchema, withRanges } from './openapi-parts'
import { changeEventSchema, changeFeedPaths, webhookEndpointPaths, webhookEndpointSchemas } from './openapi-other-paths'

/** limit and offset as query parameters, from the schema that validates them. */
function pageParameters() {
  const { properties } = bodySchema(PageQuery) as { properties: Record<string, JsonSchema> }
  return Object.entries(properties).map(([name, schema]) => ({ name, in: 'query', schema }))
}

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
