// A record's input: the zod schemas built from the catalog, and the 400 naming the first field at fault.
import { z } from 'zod'
import { systemColumns, type ColumnInfo, type TableInfo } from './table-registry'
import { columnValueType } from './column-types'
import { problemCodes, ruleInWords, typeInWords } from './column-rules'
import { rejectUnstorable, validationError } from '../validation'
import type { DataRecord } from '#shared/types/data'

type Schemas = { create: z.ZodObject, update: z.ZodObject }

const isSystemColumn = (name: string) => (systemColumns as readonly string[]).includes(name)

/** The columns a request may set: every column but the system ones and generated ones. */
export function writableColumns(table: TableInfo): ColumnInfo[] {
  return table.columns.filter(column => !isSystemColumn(column.name))
}

/** A text as a sentence: ended with a full stop unless it ends as one. */
const sentence = (text: string) => /[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`

/** A column's description (the MCP tools' and the chat's input schemas): its comment and what it references, as sentences. */
function describe(column: ColumnInfo, schema: z.ZodType): z.ZodType {
  const hints = [
    column.comment && sentence(column.comment),
    column.references && `References ${column.references.table}.${column.references.column}.`,
  ]
  const description = hints.filter(Boolean).join(' ')
  return description ? schema.describe(description) : schema
}

/** `field: is a system column…` / `field: is not a column of <table>` for the first unknown key. */
function unknownKeyError(table: TableInfo) {
  return (issue: z.core.$ZodRawIssue) => {
    if (issue.code !== 'unrecognized_keys') return undefined
    const key = (issue as unknown as { keys: string[] }).keys[0]!
    return isSystemColumn(key)
      ? `${key}: is a system column and cannot be set`
      : `${key}: is not a column of ${table.name}`
  }
}

const schemaCache = new WeakMap<TableInfo, Schemas>()

/**
 * The zod schemas of a domain table's input, built from the catalog. Strict: an unknown or system
 * field is an error naming the field. `create` requires the not-null columns without a default.
 */
export function recordSchemas(table: TableInfo): Schemas {
  const cached = schemaCache.get(table)
  if (cached) return cached
  const create: Record<string, z.ZodType> = {}
  const update: Record<string, z.ZodType> = {}
  for (const column of writableColumns(table)) {
    const value = column.nullable ? columnValueType(column).zod.nullable() : columnValueType(column).zod
    const isRequired = !column.nullable && !column.hasDefault
    create[column.name] = describe(column, isRequired ? value : value.optional())
    update[column.name] = describe(column, value.optional())
  }
  const error = unknownKeyError(table)
  const schemas = { create: z.strictObject(create, { error }), update: z.strictObject(update, { error }) }
  schemaCache.set(table, schemas)
  return schemas
}

/**
 * Parses input with a zod schema; a 400 names the first invalid field, says the column's rule in
 * words, and carries the code of that problem (the same code a filter on the column would get).
 */
export function parseRecordInput(table: TableInfo, schema: z.ZodObject, input: unknown): DataRecord {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw createError({ statusCode: 400, statusMessage: 'The record must be a JSON object' })
  }
  rejectUnstorable(input)
  const result = schema.safeParse(input)
  if (result.success) return result.data as DataRecord
  throw recordInputError(table, result.error.issues, input as Record<string, unknown>)
}

/** The 400 of the first invalid field of a record's input. */
function recordInputError(table: TableInfo, issues: readonly z.core.$ZodIssue[], input: Record<string, unknown>) {
  const issue = issues[0]
  const name = issue?.path[0]
  const column = typeof name === 'string' ? table.columns.find(c => c.name === name) : undefined
  if (!issue || !column) {
    const unknown = issue?.code === 'unrecognized_keys' && !isSystemColumn(issue.keys[0] ?? '')
    return createError({ statusCode: 400, statusMessage: validationError(issues).statusMessage, data: unknown ? { code: problemCodes.unknownColumn } : undefined })
  }
  const problem = (message: string, code: string) => createError({ statusCode: 400, statusMessage: `${column.name}: ${message}`, data: { code } })
  const value = input[column.name]
  if (value === undefined || value === null) return problem('is required', problemCodes.required)
  if (issue.code === 'too_big' || issue.code === 'too_small') {
    const rule = ruleInWords(table, column)
    if (rule !== typeInWords(column)) return problem(rule, problemCodes.outsideRule)
    const bound = issue.code === 'too_big' ? `at most ${issue.maximum}` : `at least ${issue.minimum}`
    return problem(`${rule} ${bound}`, column.type.startsWith('character') ? problemCodes.outsideRule : problemCodes.outOfRange)
  }
  return problem(typeInWords(column), problemCodes.wrongType)
}

/** Runs `fn` for the element `index` of a list; a 4xx it throws is prefixed with `[index]`. */
export function forElement<T>(index: number, fn: () => T): T {
  const prefixed = (error: unknown) => {
    if (!isError(error) || error.statusCode >= 500) return error
    const message = error.statusMessage || error.message
    return createError({ statusCode: error.statusCode, statusMessage: /^[\w.]+: /.test(message) ? `[${index}].${message}` : `[${index}]: ${message}`, data: error.data })
  }
  try {
    const result = fn()
    if (!(result instanceof Promise)) return result
    return result.catch((error: unknown) => Promise.reject(prefixed(error))) as T
  }
  catch (error) {
    throw prefixed(error)
  }
}
