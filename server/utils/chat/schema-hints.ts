import type { ColumnInfo, TableInfo } from '../table-registry'

const listCheck = (column: ColumnInfo) => column.allowedValues
  ? `one of: (${column.allowedValues.map(value => `'${value.replace(/'/g, '\'\'')}'`).join(', ')})`
  : null

function columnLine(table: TableInfo, column: ColumnInfo): string {
  const traits = [
    column.type,
    column.nullable ? 'nullable' : 'not null',
    column.hasDefault ? 'has a default' : null,
    listCheck(column),
    column.references ? `fk: ${column.references.table}.${column.references.column}` : null,
  ]
  // single-column CHECKs other than a list (ranges, lengths) as written
  for (const check of table.checks) {
    if (check.columns.length === 1 && check.columns[0] === column.name && !column.allowedValues) traits.push(check.definition)
  }
  const comment = column.comment ? ` -- ${column.comment}` : ''
  return `  - ${column.name}: ${traits.filter(Boolean).join(', ')}${comment}`
}

/** The schema hint of one table (SPEC.md "Schema hints given to the chat model"). */
export function tableHint(table: TableInfo): string {
  const lines = [`Table ${table.name}${table.comment ? ` -- ${table.comment}` : ''}`]
  lines.push(...table.columns.map(column => columnLine(table, column)))
  const compound = table.checks.filter(check => check.columns.length !== 1)
  for (const check of compound) lines.push(`  - check ${check.name}: ${check.definition}`)
  return lines.join('\n')
}

/**
 * What the model is told of the tables it may use: columns and types, single-column list CHECKs
 * as `one of: (...)`, other CHECKs as their definition, foreign keys as `fk: table.column` and
 * column comments as free-text hints.
 */
export function schemaHints(tables: TableInfo[]): string {
  return tables.map(tableHint).join('\n\n')
}
