// Claims: due deliveries leased to one worker, the receivers it holds, and giving both back.
import type { Database } from '../db/db-drivers'

export interface ClaimedDelivery {
  id: string
  team_id: string
  body: string
  attempts: number
  retry_step: number
  endpoint_id: string | null
  /** The receiver the per-endpoint bound counts against: the endpoint, or the team (its webhook_url). */
  target: string
  /** When the event was queued (its write's transaction), in ms since the epoch. */
  queued_at: number
  url: string | null
  secret: string | null
  /** The secret before the last rotation, while it is still valid. */
  previous_secret: string | null
}

/** How many due rows one claim looks at (and locks) to share its slots among receivers. */
const claimScan = 500

/**
 * How long a claim holds the receivers it took deliveries for: other workers pass over their rows
 * meanwhile, and each claim that takes more of a receiver's rows renews its hold. A worker that
 * dies holds its receivers this long at most.
 */
const holdSeconds = 5

/**
 * Takes up to `limit` due deliveries and leases them to this worker (`worker`, its id), at most
 * `room` per receiver (`roomOf`: target -> how many more this worker takes for it; `room` for any
 * other). One short statement: the rows are committed as `delivering` before any HTTP request, so
 * no transaction is held while sending (PGlite has one session). The rows it looks at are locked
 * as they are read, skipping locked ones (SKIP LOCKED), so that two workers never take the same row,
 * and a claim that runs beside another one takes the rows after the other's instead of finding all
 * of its own candidates locked and taking none. It passes over the rows of receivers another worker
 * holds, and holds the receivers it takes rows for (`holdSeconds`), so that one worker at a time
 * sends to a receiver. Every claimed row is sent at once, so its lease runs from the start of its
 * attempt. A lease that runs out (its worker died) makes the row due again.
 */
export async function claimDueDeliveries(db: Database, worker: string, limit: number, leaseSeconds: number, room = limit, roomOf: ReadonlyMap<string, number> = new Map()): Promise<ClaimedDelivery[]> {
  // the statement is public.claim_webhook_deliveries (a migration): its own planner settings keep
  // it on the due rows' index when the statistics say few rows are pending, so that the plan it
  // keeps for the session is that walk (a prepared statement's generic plan once read every
  // pending row: a burst of 5,000 was delivered at 15 to 80 a second, bench:webhooks)
  const { rows } = await db.query<ClaimedDelivery>(
    'select * from public.claim_webhook_deliveries($1, $2, $3, $4, $5, $6, $7)',
    [limit, leaseSeconds, room, JSON.stringify(Object.fromEntries(roomOf)), claimScan, worker, holdSeconds],
  )
  return rows
}

/**
 * Deletes the holds that ran out over a minute ago (receivers no one has sent to since), so that
 * the table stays as small as the set of receivers being sent to; a hold is made again by the next
 * claim of its receiver. Run by the periodic webhook job.
 */
export async function forgetLapsedHolds(db: Database): Promise<number> {
  const { rowCount } = await db.query(`delete from public.webhook_receiver_holds where held_until < now() - interval '1 minute'`)
  return rowCount ?? 0
}

/** Leased rows this worker holds but has not started: back to pending, so that no one waits for their lease (stopping). */
export async function releaseDeliveries(db: Database, ids: string[]) {
  if (!ids.length) return
  await db.query(
    `update public.webhook_deliveries set status = 'pending', locked_until = null, updated_at = now()
     where id = any ($1::uuid[]) and status = 'delivering'`,
    [ids],
  )
}

/** Stopping, once nothing of this worker is in flight: its receivers go to the next claim, without waiting for the holds to run out. */
export async function releaseHolds(db: Database, worker: string) {
  await db.query('delete from public.webhook_receiver_holds where worker = $1', [worker])
}
