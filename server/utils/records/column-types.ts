import { z } from 'zod'
import { isoDate, isoDateTime, isoLocalDateTime } from '#shared/utils/schemas'
import { basicType, type ColumnInfo } from './table-registry'

export type JsonSchema = Record<string, unknown>

/** A column's value (null not included) as the zod schema that validates input and the JSON Schema that documents it. */
export interface ColumnValueType {
  zod: z.ZodType
  json: JsonSchema
}

const integer = (min: number, max: number): ColumnValueType => ({
  zod: z.number().int().min(min).max(max),
  json: { type: 'integer' },
})

const text: ColumnValueType = { zod: z.string(), json: { type: 'string' } }

/** The value type of a column, from its catalog type and list CHECK: the one mapping behind validation and the OpenAPI document. */
export function columnValueType(column: Pick<ColumnInfo, 'type' | 'allowedValues'>): ColumnValueType {
  if (column.allowedValues) {
    return { zod: z.enum(column.allowedValues as [string, ...string[]]), json: { type: 'string', enum: column.allowedValues } }
  }
  const varchar = /^character varying\((\d+)\)$/.exec(column.type)
  if (varchar) return { zod: z.string().max(Number(varchar[1])), json: { type: 'string', maxLength: Number(varchar[1]) } }
  // `timestamp(3) with time zone` (updated_at) is a moment like any other
  const type = basicType(column.type)
  if (type === 'uuid') return { zod: z.uuid(), json: { type: 'string', format: 'uuid' } }
  if (type === 'text' || type === 'citext' || type === 'character varying') return text
  if (type === 'integer') return integer(-2147483648, 2147483647)
  if (type === 'smallint') return integer(-32768, 32767)
  if (type === 'bigint') return { zod: z.number().int(), json: { type: 'integer' } }
  if (type === 'boolean') return { zod: z.boolean(), json: { type: 'boolean' } }
  if (type === 'date') return { zod: isoDate, json: { type: 'string', format: 'date' } }
  if (type === 'timestamp with time zone') return { zod: isoDateTime, json: { type: 'string', format: 'date-time' } }
  if (type === 'timestamp without time zone') return { zod: isoLocalDateTime, json: { type: 'string', format: 'date-time' } }
  if (type === 'json' || type === 'jsonb') return { zod: z.json(), json: {} }
  if (type === 'text[]') return { zod: z.array(z.string()), json: { type: 'array', items: { type: 'string' } } }
  if (/^(numeric|real|double precision)/.test(type)) return { zod: z.number(), json: { type: 'number' } }
  return text
}
