// A database error of a record write (a check, a missing value, a foreign key, a unique key, a bad
// value) as a 4xx in words a person or a model can act on.
import { singleCheckInWords } from './column-rules'
import type { TableInfo } from './table-registry'

interface DatabaseError {
  code?: string
  constraint?: string
  column?: string
  detail?: string
  message?: string
}

/**
 * A CHECK over several columns in words: the first clause of a column comment that names another
 * of its columns (`a done task must have completed_at`), else its condition in plain terms.
 */
function checkInWords(table: TableInfo, check: TableInfo['checks'][number]): string {
  const clause = check.columns
    .flatMap(name => (table.columns.find(c => c.name === name)?.comment ?? '').split(/[;.]\s*/)
      .filter(part => check.columns.some(other => other !== name && part.includes(other))))[0]
  const rule = clause?.trim() || `must satisfy ${check.definition.replace(/^CHECK \((.*)\)$/s, '$1')
    .replace(/::[a-z ]+(\[\])?/gi, '').replace(/<>/g, 'is not').replace(/\bOR\b/g, 'or').replace(/\bAND\b/g, 'and').replace(/[()]/g, '')}`
  return `${rule} (violates ${check.name})`
}

const valueErrors = new Set(['22P02', '22003', '22007', '22008', '22001', '22023'])

/** A database error as a 400 with a message a person or a model can act on; anything else is rethrown. */
export function databaseErrorMessage(table: TableInfo, error: unknown): string | null {
  const { code, constraint, column, detail, message } = (error ?? {}) as DatabaseError
  if (code === '23514') {
    const check = table.checks.find(c => c.name === constraint)
    if (!check) return `violates ${constraint ?? 'a check constraint'}`
    return singleCheckInWords(table, check) ?? `${check.columns.join(', ')}: ${checkInWords(table, check)}`
  }
  if (code === '23502') return `${column ?? 'a column'}: is required`
  if (code === '23503') {
    const field = /^Key \(([^)]+)\)/.exec(detail ?? '')?.[1] ?? constraint ?? 'a foreign key'
    return `${field}: references a record that does not exist (${constraint ?? 'foreign key'})`
  }
  if (code === '23505') return `violates the unique constraint ${constraint ?? ''}`.trim()
  if (code && valueErrors.has(code)) return `Invalid value: ${message ?? 'out of range'}`
  return null
}

export async function withDatabaseErrors<T>(table: TableInfo, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  }
  catch (error) {
    const message = databaseErrorMessage(table, error)
    if (message === null) throw error
    const { code } = error as DatabaseError
    throw createError({ statusCode: code === '23505' ? 409 : 400, statusMessage: message, data: { code } })
  }
}
