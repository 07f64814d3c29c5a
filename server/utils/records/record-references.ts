// The same-team check of a record's foreign keys: inside the write's own statement, and one by one
// to name the field at fault when that statement wrote nothing.
import type { Queryable } from '../db/db-drivers'
import { quoteIdent, type ColumnInfo, type TableInfo, useTableRegistry } from './table-registry'
import type { DataRecord } from '#shared/types/data'

/**
 * The condition that a foreign-key value points at a row the team may use: a row of the same team
 * for a domain table, a member of the team for profiles, the team itself for teams; null for a
 * reference outside the team model, which the foreign key itself decides. `$value` and `$team` are
 * the placeholders of the value and the team id.
 */
function referenceCondition(column: ColumnInfo, registry: Map<string, TableInfo>, value: string, team: string): string | null {
  const references = column.references
  if (!references) return null
  const target = registry.get(references.table)
  // no casts on the value: its type comes from the column it is compared with (and, in an insert, written to)
  if (references.table === 'teams') return `${value} = ${team}::uuid`
  if (references.table === 'profiles') return `exists (select 1 from public.team_members where user_id = ${value} and team_id = ${team})`
  if (target?.columns.some(c => c.name === 'team_id')) {
    return `exists (select 1 from public.${quoteIdent(target.name)} where ${quoteIdent(references.column)} = ${value} and team_id = ${team})`
  }
  return null
}

/** The reference conditions of the written columns, whose values are the parameters from $3 on and the team $1 or $2. */
export async function referenceConditions(columns: ColumnInfo[], values: DataRecord, team: string, registry?: Map<string, TableInfo>): Promise<string[]> {
  const tables = registry ?? await useTableRegistry()
  return columns
    .map((column, i) => values[column.name] === null ? null : referenceCondition(column, tables, `$${i + 3}`, team))
    .filter((condition): condition is string => condition !== null)
}

/** Checks each foreign-key value with its own statement; 400 naming the first field that points outside the team. */
export async function checkReferences(db: Pick<Queryable, 'query'>, table: TableInfo, teamId: string, values: DataRecord) {
  const registry = await useTableRegistry()
  for (const column of table.columns) {
    if (values[column.name] === undefined || values[column.name] === null) continue
    const condition = referenceCondition(column, registry, '$1', '$2')
    if (!condition) continue
    const { rows } = await db.query<{ ok: boolean }>(`select ${condition} as ok`, [values[column.name], teamId])
    if (!rows[0]?.ok) {
      const what = column.references!.table === 'profiles' ? 'member of this team' : `${column.references!.table} record in this team`
      throw createError({ statusCode: 400, statusMessage: `${column.name}: no ${what} has this id` })
    }
  }
}

/**
 * Why a write that checks its references in its own statement wrote nothing: the 400 naming the
 * first field that points outside the team, else a 409 (a record it refers to changed meanwhile).
 */
export async function refusedReferences(db: Pick<Queryable, 'query'>, table: TableInfo, teamId: string, values: DataRecord): Promise<never> {
  await checkReferences(db, table, teamId, values)
  throw createError({ statusCode: 409, statusMessage: 'A record this one refers to changed while it was written; try again' })
}
