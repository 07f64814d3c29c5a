import type { ApiKeyScopes } from '#shared/utils/api-keys'
import { listen, notificationsHealthy, onReconnect } from '../db/notifications'

/**
 * The API keys this instance has verified, by the hash of the key, so that a request with a known
 * key runs no statement to authenticate. Postgres stays the truth: a trigger on api_keys notifies
 * api_key_changed with the key's id on every change (revoke, roll, expiry, scopes, delete) and every
 * instance forgets that key; the instance that makes a change forgets the key itself before it
 * answers. While the notification connection is down nothing cached is trusted for longer than
 * 5 s after it was verified, and the cache is emptied when the connection is lost and again when
 * it is back. Expiry is checked against the clock on every request. A key once found revoked is
 * refused by this instance from then on. The embedded database (one process, where SQL may also
 * arrive through its socket, which does not notify) keeps no cache: every request looks its key up.
 */

/** What a request needs of its key, and what the cache needs to judge it. */
export interface CachedApiKey {
  id: string
  team_id: string
  created_by: string
  scopes: ApiKeyScopes
  /** When the key expires (ms since the epoch), or null. */
  expiresAt: number | null
  /** When it was verified against the database (ms since the epoch). */
  verifiedAt: number
}

/** How long an entry is trusted without a notification connection. */
const untrustedAfterMs = 5_000
/** Entries kept at most (past it the oldest go first). */
const maxEntries = 50_000

const entries = new Map<string, CachedApiKey>()
const hashesById = new Map<string, string>()
/** Keys this instance found revoked, by hash: never served again (their ids and teams, for the API log). */
const revokedHashes = new Map<string, RefusedKeyOwner>()
/** Bumped on every forget: a look-up that began before it must not cache what it read. */
let generation = 0
let listening: Promise<void> | undefined

function forgetAll() {
  generation++
  entries.clear()
  hashesById.clear()
}

/** Forgets the key with this id (changed or deleted), here and now. */
export function forgetApiKey(keyId: string): void {
  generation++
  const hash = hashesById.get(keyId)
  if (hash === undefined) return
  hashesById.delete(keyId)
  entries.delete(hash)
}

/** Starts listening for key changes (once); resolves when listening or registered for the next connection. */
export function listenForKeyChanges(): Promise<void> {
  listening ??= (async () => {
    onReconnect(forgetAll)
    await listen('api_key_changed', forgetApiKey)
  })()
  return listening
}

/** The cached key of this hash when it may be trusted right now, else undefined. */
export function cachedApiKey(hash: string): CachedApiKey | undefined {
  const entry = entries.get(hash)
  if (!entry) return undefined
  if (!notificationsHealthy() && Date.now() - entry.verifiedAt > untrustedAfterMs) {
    entries.delete(hash)
    hashesById.delete(entry.id)
    return undefined
  }
  return entry
}

/** The cache's generation now: pass it to rememberApiKey after a look-up that began now. */
export function keyCacheGeneration(): number {
  return generation
}

/** Caches a verified key, unless a key was forgotten since the look-up began (its answer may be stale). */
export function rememberApiKey(hash: string, key: CachedApiKey, lookupGeneration: number): void {
  if (lookupGeneration !== generation) return
  if (entries.size >= maxEntries) {
    const oldest = entries.keys().next().value
    if (oldest !== undefined) {
      hashesById.delete(entries.get(oldest)!.id)
      entries.delete(oldest)
    }
  }
  entries.set(hash, key)
  hashesById.set(key.id, hash)
}

/** A revoked key's id and team. */
export interface RefusedKeyOwner {
  id: string
  team_id: string
}

/** Records that the key of this hash is revoked: this instance refuses it from now on. */
export function rememberRevoked(hash: string, key: RefusedKeyOwner): void {
  if (revokedHashes.size < maxEntries) revokedHashes.set(hash, key)
  const entry = entries.get(hash)
  if (entry) forgetApiKey(entry.id)
}

/** The key of this hash when this instance has found it revoked. */
export function revokedKeyOf(hash: string): RefusedKeyOwner | undefined {
  return revokedHashes.get(hash)
}
