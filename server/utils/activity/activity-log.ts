import type { z } from 'zod'
import type { ActivityEntry, ActivityPage } from '#shared/types/api'
import { uuidPattern } from '#shared/utils/patterns'
import type { ActivityExportQuery, ActivityFilters, ActivityQuery } from '#shared/utils/schemas'
import { requireTeam, type AuditedClient } from '../db/audited-client'
import { csvHeader, csvRows } from '../http/csv'
import type { Database } from '../db/db-drivers'
import { purgePastActivityRetention } from '../jobs/purge'
import { quoteIdent, useTableRegistry } from '../records/table-registry'

/** The filters of a request, plus `tables`: only entries of these tables (for callers who may see only some). */
type Filters = z.output<typeof ActivityFilters> & { tables?: string[] }

/** The where clause of the team's entries that match the filters; $1 is the team. */
function activityWhere(teamId: string, filters: Filters) {
  const where = ['a.team_id = $1']
  const params: unknown[] = [teamId]
  const conditions: [keyof Filters, string][] = [
    ['source', 'a.source = $'],
    ['table', 'a.table_name = $'],
    ['actor_id', 'a.actor_id = $'],
    ['api_key_id', 'a.api_key_id = $'],
    ['action', 'a.action = $'],
    ['record_id', 'a.record_id = $'],
    ['from', 'a.created_at >= $'],
    ['to', 'a.created_at < $'],
    ['tables', 'a.table_name = any($'],
  ]
  for (const [key, condition] of conditions) {
    const value = filters[key]
    if (value === undefined) continue
    params.push(value)
    where.push(`${condition}${params.length}${key === 'tables' ? ')' : ''}`)
  }
  return { condition: where.join(' and '), params }
}

// created_at in the API's one form (milliseconds, `Z`)
const entryColumns = `a.id, a.team_id, a.actor_id, p.name as actor_name, a.source, a.source_ref,
  a.api_key_id, k.name as api_key_name, a.table_name, a.record_id,
  coalesce(a.new_data ->> 'name', a.new_data ->> 'title', a.old_data ->> 'name', a.old_data ->> 'title',
           a.new_data ->> 'email', a.old_data ->> 'email', m.name) as record_title,
  a.action, a.new_data, a.old_data,
  to_char(a.created_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at`

const entryJoins = `left join public.profiles p on p.id = a.actor_id
  left join public.api_keys k on k.id = a.api_key_id and k.team_id = a.team_id
  left join public.profiles m on a.table_name = 'team_members' and m.id::text = coalesce(a.new_data, a.old_data) ->> 'user_id'`

/** A page of the team's activity, newest first, with names for people, keys, records and the ids in the values. */
export async function listActivity(client: AuditedClient, filters: z.output<typeof ActivityQuery> & Pick<Filters, 'tables'>): Promise<ActivityPage> {
  const teamId = requireTeam(client)
  const { condition, params } = activityWhere(teamId, filters)
  const [page, count] = await Promise.all([
    client.read<ActivityEntry>(
      `select ${entryColumns}, g.client_name from public.activity_log a ${entryJoins}
       left join public.oauth_grants g on a.source = 'mcp' and a.api_key_id is null and g.team_id = a.team_id and g.id::text = a.source_ref
       where ${condition}
       order by a.created_at desc, a.id desc
       limit $${params.length + 1} offset $${params.length + 2}`,
      [...params, filters.limit, filters.offset],
    ),
    client.read<{ total: number }>(`select count(*)::int as total from public.activity_log a where ${condition}`, params),
  ])
  return { entries: page.rows, total: count.rows[0]!.total, names: await referencedNames(client, teamId, page.rows) }
}

/**
 * The names of the ids the entries' values point at through a foreign key (a project's name, a
 * member's name), looked up in the entries' team only.
 */
async function referencedNames(client: AuditedClient, teamId: string, entries: ActivityEntry[]): Promise<Record<string, string>> {
  const registry = await useTableRegistry()
  const idsByTarget = new Map<string, Set<string>>()
  for (const entry of entries) {
    const table = registry.get(entry.table_name)
    for (const column of table?.columns ?? []) {
      if (!column.references || column.references.column !== 'id' || column.references.table === 'teams') continue
      for (const values of [entry.new_data, entry.old_data]) {
        const value = values?.[column.name]
        if (typeof value !== 'string' || !uuidPattern.test(value)) continue
        const ids = idsByTarget.get(column.references.table) ?? new Set()
        ids.add(value)
        idsByTarget.set(column.references.table, ids)
      }
    }
  }
  const names: Record<string, string> = {}
  await Promise.all([...idsByTarget].map(async ([target, ids]) => {
    const table = registry.get(target)
    const nameColumn = ['name', 'title'].find(name => table?.columns.some(c => c.name === name))
    if (!table || !nameColumn) return
    const hasTeam = table.columns.some(c => c.name === 'team_id')
    if (!hasTeam && target !== 'profiles') return
    const { rows } = await client.read<{ id: string, name: string }>(
      hasTeam
        ? `select id::text as id, ${quoteIdent(nameColumn)}::text as name from public.${quoteIdent(target)} where team_id = $1 and id = any($2::uuid[])`
        : `select id::text as id, name::text as name from public.profiles where $1::uuid is not null and id = any($2::uuid[])`,
      [teamId, [...ids]],
    )
    for (const row of rows) names[row.id] = row.name
  }))
  return names
}

const exportBatchSize = 1000

/** The columns of an exported entry, in CSV order. */
export const activityExportColumns = [
  'id', 'created_at', 'actor_id', 'actor_name', 'source', 'source_ref', 'api_key_id', 'api_key_name',
  'table_name', 'record_id', 'record_title', 'action', 'new_data', 'old_data',
] as const satisfies readonly (keyof ActivityEntry)[]

/**
 * Every entry of the team that matches the filters, newest first, as CSV lines (with a header) or
 * NDJSON lines. Read in keyset batches, so memory stays the same whatever the number of entries.
 */
export async function* exportActivity(client: AuditedClient, query: z.output<typeof ActivityExportQuery>): AsyncGenerator<string> {
  const teamId = requireTeam(client)
  const { format, ...filters } = query
  const { condition, params } = activityWhere(teamId, filters)
  const next = params.length + 1
  // page_at: the exact time (microseconds), where the next batch starts
  const sql = `select ${entryColumns}, to_char(a.created_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as page_at
    from public.activity_log a ${entryJoins}
    where ${condition} and ($${next}::timestamptz is null or (a.created_at, a.id) < ($${next}::timestamptz, $${next + 1}::uuid))
    order by a.created_at desc, a.id desc
    limit ${exportBatchSize}`
  if (format === 'csv') yield csvHeader(activityExportColumns)
  let after: [string | null, string | null] = [null, null]
  while (true) {
    const { rows: read } = await client.read<ActivityEntry & { page_at: string }>(sql, [...params, ...after])
    if (!read.length) return
    const last = read[read.length - 1]!
    const rows = read.map(({ page_at: _, ...entry }) => entry)
    yield format === 'csv'
      ? csvRows(activityExportColumns, rows)
      : rows.map(row => `${JSON.stringify(row)}\n`).join('')
    if (rows.length < exportBatchSize) return
    after = [last.page_at, last.id]
  }
}

/**
 * Deletes the entries older than their team's `activity_retention_days`, in batches. One instance
 * at a time runs it (its job's advisory lock, server/plugins/activity-retention.ts). Returns the
 * number deleted.
 */
export function purgeExpiredActivity(db: Database, batchSize = 10_000): Promise<number> {
  return purgePastActivityRetention(db, 'activity_log', batchSize)
}
