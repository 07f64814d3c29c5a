// The pieces of the OpenAPI document that every part of it uses: the JSON Schemas of a record and
// of a request body, and the headers, parameters and error answers of the operations.
import { z } from 'zod'
import { joinedNames } from '../records/record-sql'
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
export function withRanges(table: TableInfo, schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  for (const check of table.checks) {
    const range = check.columns.length === 1 ? checkRange(check.definition) : null
    const property = range && properties?.[range.column]
    if (property) Object.assign(property, range.bounds)
  }
  return schema
}

/** The schema of a record; `partial` for a list's, whose `select` may leave columns out. */
export function recordSchema(table: TableInfo, registry: Map<string, TableInfo>, partial = false): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const column of table.columns) properties[column.name] = columnSchema(column)
  for (const join of joinedNames(table, registry)) {
    properties[join.alias] = { type: ['string', 'null'], description: `${join.nameColumn} of the ${join.target} record in ${join.column}` }
  }
  if (partial) return withRanges(table, { type: 'object', description: `A ${table.name} record in a list: every column, or the items chosen with select (renamed columns, embedded tables)`, properties })
  return withRanges(table, { type: 'object', description: table.comment ?? undefined, properties, required: table.columns.map(c => c.name) })
}

export function bodySchema(schema: z.ZodObject): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema
  return rest
}

export const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema })

/** Headers of every answer of a key: its rate limit. */
export const rateLimitHeaders = {
  'RateLimit-Limit': header('Requests the key may make per window', { type: 'integer' }),
  'RateLimit-Remaining': header('Requests left in the current window', { type: 'integer' }),
  'RateLimit-Reset': header('Seconds until the window resets', { type: 'integer' }),
}

export const errorResponse = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { ...rateLimitHeaders, ...headers },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

export const parameter = (name: string, where: 'query' | 'header', description: string, schema: JsonSchema = { type: 'string' }) =>
  ({ name, in: where, required: false, description, schema })
