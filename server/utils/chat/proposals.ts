import type { WriteAction, WriteProposal } from '#shared/types/chat'
import { labelColumns, writeSentence } from '#shared/utils/chat-tools'
import { uuidPattern } from '#shared/utils/patterns'
import type { Database } from '../db/db-drivers'
import { quoteIdent, type TableInfo } from '../records/table-registry'

/** Which table each uuid of a write's input names: the record itself (`id`) or a foreign key's table. */
function referencedTables(table: TableInfo, input: Record<string, unknown>): Map<string, string[]> {
  const byTable = new Map<string, string[]>()
  for (const [column, value] of Object.entries(input)) {
    if (typeof value !== 'string') continue
    const target = column === 'id' ? table.name : table.columns.find(c => c.name === column)?.references?.table
    if (target) byTable.set(target, [...(byTable.get(target) ?? []), value])
  }
  return byTable
}

/**
 * The names of the records a write refers to, read in the caller's team only: a team's own
 * records by their title or name, people by name among the team's members. An id of another
 * team (or none) stays unnamed.
 */
export async function resolveNames(db: Database, registry: Map<string, TableInfo>, teamId: string, table: TableInfo, input: Record<string, unknown>): Promise<Record<string, string>> {
  const names: Record<string, string> = {}
  for (const [name, ids] of referencedTables(table, input)) {
    const valid = ids.filter(id => uuidPattern.test(id))
    const target = registry.get(name)
    if (!valid.length || !target) continue
    let rows: { id: string, label: string | null }[]
    if (name === 'profiles') {
      ({ rows } = await db.query<{ id: string, label: string | null }>(
        `select p.id, coalesce(nullif(p.name, ''), p.email) as label from public.profiles p
         join public.team_members m on m.user_id = p.id and m.team_id = $1 where p.id = any($2::uuid[])`,
        [teamId, valid],
      ))
    }
    else {
      const label = labelColumns.find(column => target.columns.some(c => c.name === column))
      if (!label || !target.columns.some(c => c.name === 'team_id')) continue
      ({ rows } = await db.query<{ id: string, label: string | null }>(
        `select id, ${quoteIdent(label)}::text as label from public.${quoteIdent(name)} where team_id = $1 and id = any($2::uuid[])`,
        [teamId, valid],
      ))
    }
    for (const row of rows) if (row.label) names[row.id] = row.label
  }
  return names
}

/** A proposed write as the approver reads it, names resolved now. */
export async function writeProposal(db: Database, registry: Map<string, TableInfo>, teamId: string, action: WriteAction, table: TableInfo, input: Record<string, unknown>): Promise<WriteProposal> {
  const names = await resolveNames(db, registry, teamId, table, input)
  return { sentence: writeSentence(action, table.name, input, names), names }
}
