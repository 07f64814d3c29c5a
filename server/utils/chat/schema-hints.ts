import type { ColumnInfo, TableInfo } from '../records/table-registry'
import type { ValueHints } from './value-hints'

const quoteList = (values: string[]) => values.map(value => `'${value.replace(/'/g, '\'\'')}'`).join(', ')

const listCheck = (column: ColumnInfo) => column.allowedValues
  ? `one of: (${quoteList(column.allowedValues)})`
  : null

function columnLine(table: TableInfo, column: ColumnInfo, found?: string[]): string {
  const traits = [
    column.type,
    column.nullable ? 'nullable' : 'not null',
    column.hasDefault ? 'has a default' : null,
    listCheck(column),
    column.references ? `fk: ${column.references.table}.${column.references.column}` : null,
    found ? `values in the team's rows: (${quoteList(found)})` : null,
  ]
  // single-column CHECKs other than a list (ranges, lengths) as written
  for (const check of table.checks) {
    if (check.columns.length === 1 && check.columns[0] === column.name && !column.allowedValues) traits.push(check.definition)
  }
  const comment = column.comment ? ` -- ${column.comment}` : ''
  return `  - ${column.name}: ${traits.filter(Boolean).join(', ')}${comment}`
}

/** The schema hint of one table, with the values found in the team's rows of its short text columns. */
export function tableHint(table: TableInfo, values: Record<string, string[]> = {}): string {
  const lines = [`Table ${table.name}${table.comment ? ` -- ${table.comment}` : ''}`]
  lines.push(...table.columns.map(column => columnLine(table, column, values[column.name])))
  const compound = table.checks.filter(check => check.columns.length !== 1)
  for (const check of compound) lines.push(`  - check ${check.name}: ${check.definition}`)
  return lines.join('\n')
}

/**
 * What the model is told of the tables it may use: columns and types, single-column list CHECKs
 * as `one of: (...)`, other CHECKs as their definition, foreign keys as `fk: table.column` and
 * column comments as free-text hints, and for short text columns with few distinct values the
 * values found in the team's own rows.
 */
export function schemaHints(tables: TableInfo[], values: ValueHints = {}): string {
  return tables.map(table => tableHint(table, values[table.name])).join('\n\n')
}
