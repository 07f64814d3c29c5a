// The open streams and sockets of API keys: streams limited per key across instances (a lease
// table in Postgres), and both closed when their key is revoked or expires, or the team's two-factor policy refuses its creator. A change to a key notifies api_key_changed (the key
// cache's notification); the key is checked again at once, and every open key is checked every
// few seconds in one statement in case a notification was lost.
import { randomUUID } from 'node:crypto'
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import { listen } from '../db/notifications'
import { useDb } from '../db/database'
import { twoFactorBlockedFromSql, twoFactorRequired } from '../credentials/principal'
import { logger } from '../log/logger'
import { schedule, type Job } from '../jobs/scheduler'

const log = logger('changes')

/** Open event streams a key may hold at once (GET /api/v1/events/stream). */
export const maxStreamsPerKey = 10
/** How often every open key is checked without a notification (the key bounds without notifications). */
const sweepIntervalMs = 5_000

/** A long-lived connection made with a key. */
export interface KeyConnection {
  keyId: string
  /** The key's scopes, kept current when they change. */
  scopes: ApiKeyScopes
  close(reason: string): void
}

const byKey = new Map<string, Set<KeyConnection>>()
let started = false

function start() {
  if (started) return
  started = true
  watch()
}

function watch() {
  listen('api_key_changed', keyId => void check([keyId]))
    .catch(error => log.error('Could not listen for key changes', { error }))
  // a person's factors, a team's policy or a member's role changed: every open key is checked again
  listen('credential_owner_changed', () => void check([...byKey.keys()]))
    .catch(error => log.error('Could not listen for credential owner changes', { error }))
  schedule({ name: 'key-stream-sweep', everyMs: sweepIntervalMs, runAtStart: false, run: () => check([...byKey.keys()]) })
}

async function check(keyIds: string[]) {
  const watched = keyIds.filter(id => byKey.has(id))
  if (!watched.length) return
  try {
    const db = await useDb()
    const { rows } = await db.query<{ id: string, scopes: ApiKeyScopes, blocked: boolean }>(
      `select k.id, k.scopes, coalesce((${twoFactorBlockedFromSql('k.created_by')}) <= extract(epoch from now()) * 1000, false) as blocked
       from public.api_keys k
       join public.teams t on t.id = k.team_id
       left join public.team_members m on m.team_id = k.team_id and m.user_id = k.created_by
       where k.id = any ($1::uuid[]) and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())`,
      [watched],
    )
    const valid = new Map(rows.map(row => [row.id, row]))
    for (const keyId of watched) {
      const row = valid.get(keyId)
      for (const connection of [...byKey.get(keyId) ?? []]) {
        if (!row) connection.close('The API key has been revoked or has expired')
        else if (row.blocked) connection.close(twoFactorRequired.keyMessage)
        else connection.scopes = row.scopes
      }
    }
  }
  catch (error) {
    log.error('Could not check the keys of open streams', { error })
  }
}

/** Registers a socket of a key (sockets are not limited). Returns its release. */
export function admitKeyConnection(connection: KeyConnection): () => void {
  start()
  let set = byKey.get(connection.keyId)
  if (!set) byKey.set(connection.keyId, set = new Set())
  set.add(connection)
  return () => {
    const current = byKey.get(connection.keyId)
    current?.delete(connection)
    if (current?.size === 0) byKey.delete(connection.keyId)
  }
}

/** This instance, as the stream leases name it. */
const instanceId = randomUUID()
/** A lease not renewed for this long is free (its instance is gone). */
const leaseSeconds = 15
const renewIntervalMs = 5_000
let renewing: Job | undefined

function renewLeases(): Promise<unknown> {
  return useDb()
    .then(db => db.query('update public.event_stream_leases set renewed_at = now() where instance_id = $1', [instanceId]))
    .catch(error => log.error('Could not renew the event stream leases', { error }))
}

/**
 * Registers an event stream of a key: it takes one of the key's 10 slots, shared by every
 * instance (429 when all are held). Returns its release.
 */
export async function admitKeyStream(connection: KeyConnection): Promise<() => void> {
  const db = await useDb()
  const streamId = randomUUID()
  // the key's streams open one at a time (an advisory lock of the key), so two never take one slot
  const slot = await db.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(hashtext('event_stream:' || $1))`, [connection.keyId])
    const { rows } = await tx.query<{ slot: number }>(
      `insert into public.event_stream_leases (key_id, slot, stream_id, instance_id)
       select $1, s, $2, $3 from generate_series(0, $4::int - 1) s
       where not exists (select 1 from public.event_stream_leases l
                         where l.key_id = $1 and l.slot = s and l.renewed_at >= now() - make_interval(secs => $5))
       order by s limit 1
       on conflict (key_id, slot) do update
         set stream_id = excluded.stream_id, instance_id = excluded.instance_id, renewed_at = now()
       returning slot`,
      [connection.keyId, streamId, instanceId, maxStreamsPerKey, leaseSeconds],
    )
    return rows[0]?.slot
  })
  if (slot === undefined) {
    throw createError({ statusCode: 429, statusMessage: `This API key has ${maxStreamsPerKey} event streams open already; close one first`, data: { code: 'too_many_streams' } })
  }
  renewing ??= schedule({ name: 'event-stream-leases', everyMs: renewIntervalMs, runAtStart: false, run: renewLeases })
  const release = admitKeyConnection(connection)
  const heldSlot = slot
  return () => {
    release()
    db.query('delete from public.event_stream_leases where key_id = $1 and slot = $2 and stream_id = $3', [connection.keyId, heldSlot, streamId])
      .catch(error => log.error('Could not release an event stream lease', { error }))
  }
}
