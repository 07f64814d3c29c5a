// The change feed: record events read in commit-safe order. An event is listed only once its
// transaction is below the reader's snapshot xmin (every earlier transaction has ended), so the
// listed events are a prefix of the final order and a cursor never passes one that commits later.
import type { ChangeEvent, ChangeSource } from '#shared/types/changes'
import type { Queryable } from '../db/db-drivers'
import { purgePastActivityRetention } from '../jobs/purge'

/** An event with what the server needs to route it: its team and table. */
export interface StoredEvent {
  teamId: string
  table: string
  event: ChangeEvent
}

/** The feed's position of an event, as the two numbers the SQL compares. */
interface Position {
  xid: string
  seq: string
}

const idPattern = /^[0-9a-f]{32}$/

/** The event id of a position: 16 hex digits of the transaction, 16 of the sequence; ids sort as the feed does. */
function eventId(xid: string, seq: string): string {
  return BigInt(xid).toString(16).padStart(16, '0') + BigInt(seq).toString(16).padStart(16, '0')
}

/** Whether a string is an event id this feed hands out. */
export function isEventId(id: string): boolean {
  return idPattern.test(id)
}

function position(id: string): Position {
  return { xid: BigInt(`0x${id.slice(0, 16)}`).toString(), seq: BigInt(`0x${id.slice(16)}`).toString() }
}

/** The id before every event. */
export const feedStart = '0'.repeat(32)

interface EventRow {
  xid: string
  seq: string
  team_id: string
  table_name: string
  type: string
  created_at: string
  data: Record<string, unknown>
  actor_id: string | null
  source: ChangeSource
  ready: boolean
}

const columns = `e.xid::text as xid, e.id::text as seq, e.team_id, e.table_name, e.type, e.created_at, e.data, e.actor_id, e.source`

function toStored(row: EventRow): StoredEvent {
  return {
    teamId: row.team_id,
    table: row.table_name,
    event: { id: eventId(row.xid, row.seq), type: row.type, created_at: row.created_at, data: row.data, actor_id: row.actor_id, source: row.source },
  }
}

export interface TeamEventsQuery {
  /** Events after this id (feedStart: from the oldest kept). */
  after: string
  /** The tables whose events may be listed. */
  tables: string[]
  /** Only these types, when given. */
  types?: string[]
  limit: number
}

/** A team's listable events after the cursor, oldest first, of the given tables (and types). */
export async function readTeamEvents(db: Queryable, teamId: string, query: TeamEventsQuery): Promise<StoredEvent[]> {
  const after = position(query.after)
  const { rows } = await db.query<EventRow>(
    `select ${columns}
     from public.record_events e
     where e.team_id = $1 and (e.xid, e.id) > ($2::text::xid8, $3::bigint)
       and e.xid < pg_snapshot_xmin(pg_current_snapshot())
       and e.table_name = any ($4::text[])
       and ($5::text[] is null or e.type = any ($5::text[]))
     order by e.xid, e.id
     limit $6`,
    [teamId, after.xid, after.seq, query.tables, query.types ?? null, query.limit],
    { prepare: true, isoTimestamps: true },
  )
  return rows.map(toStored)
}

/** The id of the last listable event of every team (feedStart when there is none): where "from now" begins. */
export async function latestEventId(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ xid: string, seq: string }>(
    `select e.xid::text as xid, e.id::text as seq from public.record_events e
     where e.xid < pg_snapshot_xmin(pg_current_snapshot())
     order by e.xid desc, e.id desc limit 1`,
    [],
    { prepare: true },
  )
  return rows[0] ? eventId(rows[0].xid, rows[0].seq) : feedStart
}

/**
 * Every team's events after the cursor, oldest first, up to `limit` rows: the listable ones
 * (`read`: how many, and `last`, the id of the last, where the next read starts), of which
 * `events` are those of the given teams (the others' data is not even sent: the hub of an
 * instance reads every team's events but hands out only its followed teams'), and whether a
 * later event waits for an earlier transaction to end.
 */
export async function readAllEvents(db: Queryable, after: string, limit: number, teamIds: string[]): Promise<{ events: StoredEvent[], read: number, last: string | undefined, waiting: boolean }> {
  const from = position(after)
  const { rows } = await db.query<EventRow>(
    `select e.xid::text as xid, e.id::text as seq, e.team_id, e.table_name, e.type, e.created_at,
       case when e.team_id = any($4::uuid[]) then e.data end as data, e.actor_id, e.source, e.xid < s.xmin as ready
     from public.record_events e, (select pg_snapshot_xmin(pg_current_snapshot()) as xmin) s
     where (e.xid, e.id) > ($1::text::xid8, $2::bigint)
     order by e.xid, e.id
     limit $3`,
    [from.xid, from.seq, limit, teamIds],
    { prepare: true, isoTimestamps: true },
  )
  const ready = rows.filter(row => row.ready)
  const followed = new Set(teamIds)
  const lastRow = ready.at(-1)
  return {
    events: ready.filter(row => followed.has(row.team_id)).map(toStored),
    read: ready.length,
    last: lastRow ? eventId(lastRow.xid, lastRow.seq) : undefined,
    waiting: ready.length < rows.length,
  }
}

/**
 * Deletes the events older than their team's activity retention (teams without one keep them),
 * in batches. One instance at a time runs it (its job's advisory lock, server/plugins/change-feed-retention.ts).
 */
export function purgeExpiredEvents(db: Pick<Queryable, 'query'>, batchSize = 10_000): Promise<number> {
  return purgePastActivityRetention(db, 'record_events', batchSize)
}
