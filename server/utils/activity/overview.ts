import { can, tablePermission, type Role } from '#shared/permissions'
import type { Overview } from '#shared/types/data'
import type { AuditedClient } from '../db/audited-client'
import { quoteIdent, domainTables } from '../records/table-registry'
import { listActivity } from './activity-log'

const chartDays = 14
const latestCount = 8

/**
 * The overview of a team for a role: the record count of each table it may view, the counts of
 * each value of their `status` columns, the latest activity it may see (every entry with
 * activity.view, else the writes to the tables it may view) and, with activity.view, writes per
 * day and source over the last two weeks.
 */
export async function teamOverview(client: AuditedClient, teamId: string, role: Role): Promise<Overview> {
  const tables = (await domainTables()).filter(table => can(role, tablePermission(table.name, 'view')))
  const seesAll = can(role, 'activity.view')
  const statusTables = tables.filter(table => table.columns.some(c => c.name === 'status' && c.allowedValues))
  const [counts, statuses, latest, writes] = await Promise.all([
    tables.length
      ? client.read<{ table: string, count: number }>(
          tables.map(table => `select ${quoteLiteral(table.name)} as table, count(*)::int as count from public.${quoteIdent(table.name)} where team_id = $1`).join(' union all '),
          [teamId],
        )
      : { rows: [] },
    statusTables.length
      ? client.read<{ table: string, value: string, count: number }>(
          statusTables.map(table => `select ${quoteLiteral(table.name)} as table, status::text as value, count(*)::int as count from public.${quoteIdent(table.name)} where team_id = $1 group by status`).join(' union all '),
          [teamId],
        )
      : { rows: [] },
    listActivity(client, { limit: latestCount, offset: 0, ...(seesAll ? {} : { tables: tables.map(t => t.name) }) }),
    seesAll
      ? client.read<{ day: string, source: string, count: number }>(
          `select to_char(date_trunc('day', created_at at time zone 'utc'), 'YYYY-MM-DD') as day, source, count(*)::int as count
           from public.activity_log
           where team_id = $1 and created_at >= date_trunc('day', now() at time zone 'utc') at time zone 'utc' - make_interval(days => $2)
           group by 1, 2 order by 1`,
          [teamId, chartDays - 1],
        )
      : null,
  ])
  const byStatus = statusTables.map(table => ({
    table: table.name,
    counts: table.columns.find(c => c.name === 'status')!.allowedValues!.map(value => ({
      value,
      count: statuses.rows.find(row => row.table === table.name && row.value === value)?.count ?? 0,
    })),
  }))
  return {
    counts: counts.rows,
    by_status: byStatus,
    latest: latest.entries,
    names: latest.names,
    writes_by_day: writes ? writesPerDay(writes.rows) : null,
  }
}

const quoteLiteral = (text: string) => `'${text.replace(/'/g, '\'\'')}'`

/** One row per day of the last two weeks (days without writes included), with a count per source. */
function writesPerDay(rows: { day: string, source: string, count: number }[]): NonNullable<Overview['writes_by_day']> {
  const days: NonNullable<Overview['writes_by_day']> = []
  const today = new Date()
  for (let i = chartDays - 1; i >= 0; i--) {
    const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i)).toISOString().slice(0, 10)
    const counts = { web: 0, api: 0, chat: 0, mcp: 0, system: 0 }
    for (const row of rows) {
      if (row.day === day && row.source in counts) counts[row.source as keyof typeof counts] = row.count
    }
    days.push({ day, ...counts })
  }
  return days
}
