// The open streams and sockets of API keys on this instance: at most a few per key, and closed
// when their key is revoked or expires. A change to a key notifies api_key_changed (the key
// cache's notification); the key is checked again at once, and every open key is checked every
// few seconds in one statement in case a notification was lost.
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import { listen } from '../notifications'

/** Open event streams a key may hold at once (GET /api/v1/events/stream). */
export const maxStreamsPerKey = 10
/** How often every open key is checked without a notification (the key bounds without notifications). */
const sweepIntervalMs = 5_000

/** A long-lived connection made with a key. */
export interface KeyConnection {
  keyId: string
  /** The key's scopes, kept current when they change. */
  scopes: ApiKeyScopes
  /** Which limit it counts against: streams are limited per key, sockets are not. */
  kind: 'stream' | 'socket'
  close(reason: string): void
}

const byKey = new Map<string, Set<KeyConnection>>()
let started = false

function start() {
  if (started) return
  started = true
  listen('api_key_changed', keyId => void check([keyId]))
    .catch(error => console.error('[changes] could not listen for key changes:', (error as Error).message))
  setInterval(() => void check([...byKey.keys()]), sweepIntervalMs).unref()
}

async function check(keyIds: string[]) {
  const watched = keyIds.filter(id => byKey.has(id))
  if (!watched.length) return
  try {
    const db = await useDb()
    const { rows } = await db.query<{ id: string, scopes: ApiKeyScopes }>(
      `select id, scopes from public.api_keys
       where id = any ($1::uuid[]) and revoked_at is null and (expires_at is null or expires_at > now())`,
      [watched],
    )
    const valid = new Map(rows.map(row => [row.id, row.scopes]))
    for (const keyId of watched) {
      const scopes = valid.get(keyId)
      for (const connection of [...byKey.get(keyId) ?? []]) {
        if (scopes) connection.scopes = scopes
        else connection.close('The API key has been revoked or has expired')
      }
    }
  }
  catch (error) {
    console.error('[changes] could not check the keys of open streams:', (error as Error).message)
  }
}

/** Registers a connection of a key; 429 when it is a stream and the key holds the most already. Returns its release. */
export function admitKeyConnection(connection: KeyConnection): () => void {
  start()
  let set = byKey.get(connection.keyId)
  const streams = [...set ?? []].filter(open => open.kind === 'stream').length
  if (connection.kind === 'stream' && streams >= maxStreamsPerKey) {
    throw createError({ statusCode: 429, statusMessage: `This API key has ${maxStreamsPerKey} event streams open already; close one first`, data: { code: 'too_many_streams' } })
  }
  if (!set) byKey.set(connection.keyId, set = new Set())
  set.add(connection)
  return () => {
    const current = byKey.get(connection.keyId)
    current?.delete(connection)
    if (current?.size === 0) byKey.delete(connection.keyId)
  }
}
