// Retention purges delete in batches: each batch one short statement (its own transaction), so a
// large purge never holds many row locks or one long transaction, and writers go on between
// batches. One instance at a time runs a purge: its job holds an advisory lock (scheduler.ts).
import type { Queryable } from '../db/db-drivers'

export interface PurgeOptions {
  /**
   * A `delete` of at most `$1` rows (its other parameters `$2` on, from `params`), e.g.
   * `delete from t where id in (select id from t where ... limit $1)`.
   */
  deleteSql: string
  params?: unknown[]
  /** Rows a batch deletes at most (default 10 000). */
  batchSize?: number
}

/** Runs the batch delete until a batch deletes fewer than `batchSize` rows; answers how many it deleted in all. */
export async function purgeInBatches(db: Pick<Queryable, 'query'>, { deleteSql, params = [], batchSize = 10_000 }: PurgeOptions): Promise<number> {
  let total = 0
  for (;;) {
    const { rowCount } = await db.query(deleteSql, [batchSize, ...params])
    total += rowCount
    if (rowCount < batchSize) return total
  }
}

/**
 * Deletes, in batches, the rows of `table` older than their team's activity retention
 * (`teams.activity_retention_days`; a team without one keeps them), by its `created_at`.
 */
export function purgePastActivityRetention(db: Pick<Queryable, 'query'>, table: 'activity_log' | 'record_events', batchSize = 10_000): Promise<number> {
  return purgeInBatches(db, {
    deleteSql: `delete from public.${table} where id in (
       select r.id from public.${table} r join public.teams t on t.id = r.team_id
       where t.activity_retention_days is not null
         and r.created_at < now() - make_interval(days => t.activity_retention_days)
       limit $1)`,
    batchSize,
  })
}
