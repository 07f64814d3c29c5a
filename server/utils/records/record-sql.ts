// The SQL of a record: the select every record answer has (its columns and joined names), the list
// query, and the INSERT of one record, built once per table and record shape.
import { quoteIdent, type ColumnInfo, type TableInfo, useTableRegistry } from './table-registry'
import { writableColumns } from './record-input'
import { referenceConditions } from './record-references'
import type { DataRecord } from '#shared/types/data'

/** The foreign keys whose target has a `name` (else `title`), and the alias each joins in (`project_id` -> `project_name`). */
export function joinedNames(table: TableInfo, registry: Map<string, TableInfo>) {
  const joins: { column: string, target: string, targetColumn: string, nameColumn: string, alias: string, sameTeam: boolean }[] = []
  for (const column of table.columns) {
    if (!column.references) continue
    const target = registry.get(column.references.table)
    const nameColumn = ['name', 'title'].find(name => target?.columns.some(c => c.name === name))
    if (!target || !nameColumn) continue
    const alias = `${column.name.replace(/_id$/, '')}_name`
    if (table.columns.some(c => c.name === alias)) continue
    const sameTeam = target.columns.some(c => c.name === 'team_id')
    joins.push({ column: column.name, target: target.name, targetColumn: column.references.column, nameColumn, alias, sameTeam })
  }
  return joins
}

/**
 * `select <columns>, <joined names> from %SOURCE% r left join …`: the shape of every record answer,
 * reading rows of %SOURCE% (the table, or a CTE of inserted/updated rows).
 */
export function recordSelectTemplate(table: TableInfo, registry: Map<string, TableInfo>): string {
  const joins = joinedNames(table, registry)
  const columns = table.columns.map(c => `r.${quoteIdent(c.name)}`)
  const names = joins.map((join, i) => `j${i}.${quoteIdent(join.nameColumn)} as ${quoteIdent(join.alias)}`)
  const from = joins.map((join, i) =>
    `left join public.${quoteIdent(join.target)} j${i} on j${i}.${quoteIdent(join.targetColumn)} = r.${quoteIdent(join.column)}`
    + (join.sameTeam ? ` and j${i}.team_id = r.team_id` : ''))
  return `select ${[...columns, ...names].join(', ')} from %SOURCE% r ${from.join(' ')}`
}

/** The list query of GET /api/v1/{table}: $1 team, $2 limit, $3 offset. */
export function listRecordsSql(table: TableInfo, registry: Map<string, TableInfo>): string {
  return `${recordSelectTemplate(table, registry).replace('%SOURCE%', `public.${quoteIdent(table.name)}`)}
    where r.team_id = $1 order by r.created_at desc, r.id desc limit $2 offset $3`
}

const selectCache = new WeakMap<TableInfo, string>()

/** `recordSelectTemplate`, built once per table. */
export async function cachedSelectTemplate(table: TableInfo, registry?: Map<string, TableInfo>): Promise<string> {
  let template = selectCache.get(table)
  if (!template) {
    template = recordSelectTemplate(table, registry ?? await useTableRegistry())
    selectCache.set(table, template)
  }
  return template
}

export async function selectSql(table: TableInfo, source: string, registry?: Map<string, TableInfo>): Promise<string> {
  return (await cachedSelectTemplate(table, registry)).replace('%SOURCE%', source)
}

export const tableSql = (table: TableInfo) => `public.${quoteIdent(table.name)}`

/** A value as a query parameter: json columns are sent as JSON text. */
export function parameter(column: ColumnInfo, value: unknown): unknown {
  return (column.type === 'json' || column.type === 'jsonb') && value !== null ? JSON.stringify(value) : value
}

/**
 * The INSERT texts built so far, per table (of one registry) and record shape. A text built once is
 * the same string on every request: the prepared statement's look-up by its text, and the driver's
 * check of that text, then compare one string with itself instead of reading 1 or 2 KB each time.
 */
const insertTexts = new WeakMap<TableInfo, Map<string, string>>()
const maxInsertTexts = 200

/**
 * The INSERT of one record for the team and actor, answering it with its joined names. It inserts
 * only when every foreign key points inside the team (else nothing, and no row comes back).
 * `audited`: for `client.write`, selecting from its audit_context; otherwise for a transaction that
 * set the context itself. `registry`: the tables, when not the app's own (the benchmark runs this
 * statement bare).
 */
export async function insertStatement(table: TableInfo, teamId: string, actorId: string, values: DataRecord, audited = false, registry?: Map<string, TableInfo>, upsert?: { id: string, action: 'update' | 'nothing' }): Promise<{ sql: string, params: unknown[] }> {
  const columns = writableColumns(table).filter(column => values[column.name] !== undefined)
  // an upsert's id goes last, so that the columns' values keep the numbers referenceConditions gives them
  const params = [teamId, actorId, ...columns.map(c => parameter(c, values[c.name])), ...(upsert ? [upsert.id] : [])]
  // the text depends only on the record's shape: which columns it gives, which of them are null
  const shape = `${audited ? 'audited' : ''}|${upsert?.action ?? ''}|${columns.map(c => values[c.name] === null ? `${c.name}=null` : c.name).join(',')}`
  let texts = insertTexts.get(table)
  if (!texts) insertTexts.set(table, texts = new Map())
  let sql = texts.get(shape)
  if (sql === undefined) {
    sql = await insertSql(table, columns, values, audited, registry, upsert?.action)
    if (texts.size < maxInsertTexts) texts.set(shape, sql)
  }
  return { sql, params }
}

async function insertSql(table: TableInfo, columns: ColumnInfo[], values: DataRecord, audited: boolean, registry: Map<string, TableInfo> | undefined, upsert: 'update' | 'nothing' | undefined): Promise<string> {
  const names = ['team_id', 'created_by', ...columns.map(c => c.name), ...(upsert ? ['id'] : [])].map(quoteIdent)
  const placeholders = names.map((_, i) => `$${i + 1}`).join(', ')
  const conditions = await referenceConditions(columns, values, '$1', registry)
  const where = conditions.length ? ` where ${conditions.join(' and ')}` : ''
  const source = audited ? `select ${placeholders} from audit_context${where}` : where || upsert ? `select ${placeholders}${where}` : `values (${placeholders})`
  // only the team's own row is ever changed: another team's id was refused before, and the where re-checks it
  const assignments = columns.map(c => `${quoteIdent(c.name)} = excluded.${quoteIdent(c.name)}`)
  const onConflict = !upsert
    ? ''
    : upsert === 'update' && assignments.length
      ? ` on conflict (id) do update set ${assignments.join(', ')} where ${tableSql(table)}.team_id = $1`
      : ' on conflict (id) do nothing'
  const insert = `with inserted as (insert into ${tableSql(table)} (${names.join(', ')}) ${source}${onConflict} returning *)`
  return `${insert} ${await selectSql(table, 'inserted', registry)}`
}
