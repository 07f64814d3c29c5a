import type { ColumnInfo, TableInfo } from './table-registry'

/**
 * The codes of the problems a value can have, the same wherever the value is found (a body, a
 * filter, `order`, `select`, `columns`): PostgreSQL's SQLSTATE of the same problem.
 */
export const problemCodes = {
  /** A name that is not a column of the table. */
  unknownColumn: '42703',
  /** A value that is not of the column's type (or not one of its listed values). */
  wrongType: '22P02',
  /** A value of the right type outside the column's rule (a range, a length, a pattern). */
  outsideRule: '23514',
  /** A required column missing or null. */
  required: '23502',
  /** A number beyond what the column's type holds. */
  outOfRange: '22003',
} as const

/** What a value of the column's type is, in words: `must be an integer`, `must be one of: a, b`. */
export function typeInWords(column: Pick<ColumnInfo, 'type' | 'allowedValues'>): string {
  if (column.allowedValues) return `must be one of: ${column.allowedValues.join(', ')}`
  const type = column.type
  if (type === 'uuid') return 'must be a uuid'
  if (['integer', 'smallint', 'bigint'].includes(type)) return 'must be an integer'
  if (/^(numeric|real|double precision)/.test(type)) return 'must be a number'
  if (type === 'boolean') return 'must be true or false'
  if (type === 'date') return 'must be a date (YYYY-MM-DD)'
  if (type.startsWith('timestamp')) return 'must be a date and time (ISO 8601, e.g. 2026-01-31T09:00:00Z)'
  if (type === 'text[]') return 'must be an array of strings'
  if (type === 'json' || type === 'jsonb') return 'must be JSON'
  const varchar = /^character varying\((\d+)\)$/.exec(type)
  if (varchar) return `must be a string of at most ${varchar[1]} characters`
  return 'must be a string'
}

/** The words of a single-column CHECK as pg_get_constraintdef renders it, or null when it is not a simple bound. */
function checkRule(definition: string, column: string): string | null {
  const body = definition.replace(/^CHECK \((.*)\)$/s, '$1').replace(/[()]/g, '').replace(/::[a-z ]+(\[\])?/gi, '').trim()
  const name = column.replace(/[.*+?^${}|[\]\\]/g, '\\$&')
  const range = new RegExp(`^${name} >= (-?[\\d.]+) AND ${name} <= (-?[\\d.]+)$`).exec(body)
  if (range) return `between ${range[1]} and ${range[2]}`
  const length = new RegExp(`^(?:char_)?length${name} >= (\\d+) AND (?:char_)?length${name} <= (\\d+)$`).exec(body)
  if (length) return `${length[1]} to ${length[2]} characters long`
  const atMost = new RegExp(`^(?:char_)?length${name} <= (\\d+)$`).exec(body)
  if (atMost) return `at most ${atMost[1]} characters long`
  const exactly = new RegExp(`^(?:char_)?length${name} = (\\d+)$`).exec(body)
  if (exactly) return `exactly ${exactly[1]} characters long`
  const single = new RegExp(`^${name} (>=|>|<=|<) (-?[\\d.]+)$`).exec(body)
  if (single) return `${{ '>=': 'at least', '>': 'more than', '<=': 'at most', '<': 'less than' }[single[1]!]} ${single[2]}`
  return null
}

/**
 * The rule of a column in words, for a message that names the field: its type, narrowed by its
 * single-column CHECKs (`must be an integer between 1 and 5`, `must be a string 1 to 200 characters long`).
 */
export function ruleInWords(table: Pick<TableInfo, 'checks'>, column: Pick<ColumnInfo, 'name' | 'type' | 'allowedValues'>): string {
  if (column.allowedValues) return typeInWords(column)
  const bounds = table.checks
    .filter(check => check.columns.length === 1 && check.columns[0] === column.name)
    .map(check => checkRule(check.definition, column.name))
    .filter((rule): rule is string => rule !== null)
  return bounds.length ? `${typeInWords(column)} ${bounds.join(' and ')}` : typeInWords(column)
}

/** A single-column CHECK in words (`priority: must be an integer between 1 and 5`), or null when it is not a simple bound. */
export function singleCheckInWords(table: Pick<TableInfo, 'checks' | 'columns'>, check: TableInfo['checks'][number]): string | null {
  const column = check.columns.length === 1 ? table.columns.find(c => c.name === check.columns[0]) : undefined
  if (!column || (!column.allowedValues && checkRule(check.definition, column.name) === null)) return null
  return `${column.name}: ${ruleInWords(table, column)}`
}
