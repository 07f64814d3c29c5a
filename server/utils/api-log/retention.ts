// Retention of the API log: each team keeps its entries and usage for api_log_retention_days (1 to
// 90). One instance at a time runs this (its job's advisory lock, server/plugins/api-log.ts). Whole
// day partitions older than every team's retention are dropped; younger ones are trimmed team by
// team, in batches.
import type { Database } from '../db/db-drivers'
import { purgeInBatches } from '../jobs/purge'

const partitionName = /^api_log_entries_(\d{4})(\d{2})(\d{2})$/

/** Applies the retention once; returns what it removed. */
export async function applyApiLogRetention(db: Database): Promise<{ partitions: number, entries: number, usage: number }> {
  const partitions = await db.transaction(async (tx) => {
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
    return dropped
  })
  const entries = await purgeInBatches(db, {
    deleteSql: `delete from public.api_log_entries where id in (
       select e.id from public.api_log_entries e join public.teams t on t.id = e.team_id
       where e.at < now() - make_interval(days => t.api_log_retention_days)
       limit $1)`,
  })
  const usage = await purgeInBatches(db, {
    deleteSql: `delete from public.api_usage where (team_id, credential_id, period, start) in (
       select u.team_id, u.credential_id, u.period, u.start from public.api_usage u join public.teams t on t.id = u.team_id
       where u.start < now() - make_interval(days => t.api_log_retention_days)
       limit $1)`,
  })
  return { partitions, entries, usage }
}
