// Retention of the API log: each team keeps its entries and usage for api_log_retention_days (1 to
// 90). Every instance runs this periodically; an advisory lock lets one run at a time. Whole day
// partitions older than every team's retention are dropped; younger ones are trimmed team by team.
import type { Database } from '../db/db-drivers'

const partitionName = /^api_log_entries_(\d{4})(\d{2})(\d{2})$/

/** Applies the retention once; returns what it removed, or `locked` when another instance is at it. */
export async function applyApiLogRetention(db: Database): Promise<{ partitions: number, entries: number, usage: number } | 'locked'> {
  return db.transaction(async (tx) => {
    const { rows: lock } = await tx.query<{ locked: boolean }>(`select pg_try_advisory_xact_lock(hashtext('api_log_retention')) as locked`)
    if (!lock[0]?.locked) return 'locked' as const
    const { rows: longest } = await tx.query<{ days: number }>('select coalesce(max(api_log_retention_days), 30)::int as days from public.teams')
    const oldestKept = Date.now() - longest[0]!.days * 86_400_000
    const { rows: partitions } = await tx.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'public.api_log_entries'::regclass`,
    )
    let dropped = 0
    for (const { name } of partitions) {
      const day = partitionName.exec(name)
      if (!day) continue
      const ends = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]) + 1)
      if (ends > oldestKept) continue
      await tx.query(`drop table public.${name}`)
      dropped++
    }
    const entries = await tx.query(
      `delete from public.api_log_entries e using public.teams t
       where t.id = e.team_id and e.at < now() - make_interval(days => t.api_log_retention_days)`,
    )
    const usage = await tx.query(
      `delete from public.api_usage u using public.teams t
       where t.id = u.team_id and u.start < now() - make_interval(days => t.api_log_retention_days)`,
    )
    return { partitions: dropped, entries: entries.rowCount, usage: usage.rowCount }
  })
}
