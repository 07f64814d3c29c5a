import { z } from 'zod'
import { PageQuery } from '#shared/utils/patterns'
import { scopeAllows, type ApiKeyScopes } from '#shared/utils/api-keys'
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

function recordSchema(table: TableInfo, registry: Map<string, TableInfo>): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const column of table.columns) properties[column.name] = columnSchema(column)
  for (const join of joinedNames(table, registry)) {
    properties[join.alias] = { type: ['string', 'null'], description: `${join.nameColumn} of the ${join.target} record in ${join.column}` }
  }
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

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

/** The paths of one table: reading operations, and writing ones when `writable`. */
function tablePaths(table: TableInfo, writable: boolean) {
  const ref = { $ref: `#/components/schemas/${table.name}` }
  const record = { 'application/json': { schema: ref } }
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }
  const common = {
    401: errorResponse('Missing, malformed, unknown, revoked or expired API key'),
    403: errorResponse(`The key's scopes lack the access to ${table.name} this operation needs`),
  }
  const writes = <T>(operations: T): T | Record<string, never> => (writable ? operations : {})
  return {
    [`/api/v1/${table.name}`]: {
      get: {
        operationId: `list_${table.name}`,
        summary: `List the team's ${table.name}, newest first`,
        parameters: pageParameters(),
        responses: { 200: { description: 'The records', content: { 'application/json': { schema: { type: 'array', items: ref } } } }, 400: errorResponse('Invalid limit or offset'), ...common },
      },
      ...writes({
        post: {
          operationId: `create_${table.name}`,
          summary: `Create a ${table.name} record`,
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${table.name}_create` } } } },
          responses: { 201: { description: 'The created record', content: record }, 400: errorResponse('Invalid field (the message names it)'), ...common },
        },
      }),
    },
    [`/api/v1/${table.name}/{id}`]: {
      parameters: [idParameter],
      get: {
        operationId: `get_${table.name}`,
        summary: `One ${table.name} record`,
        responses: { 200: { description: 'The record', content: record }, 404: errorResponse('Not a record of the key\'s team'), ...common },
      },
      ...writes({
        patch: {
          operationId: `update_${table.name}`,
          summary: `Change columns of a ${table.name} record`,
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${table.name}_update` } } } },
          responses: { 200: { description: 'The updated record', content: record }, 400: errorResponse('Invalid field (the message names it)'), 404: errorResponse('Not a record of the key\'s team'), ...common },
        },
        delete: {
          operationId: `delete_${table.name}`,
          summary: `Delete a ${table.name} record`,
          responses: { 204: { description: 'Deleted' }, 404: errorResponse('Not a record of the key\'s team'), ...common },
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
    if (writable) {
      const { create, update } = recordSchemas(table)
      schemas[`${table.name}_create`] = bodySchema(create)
      schemas[`${table.name}_update`] = bodySchema(update)
    }
    paths = { ...paths, ...tablePaths(table, writable) }
  }
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
