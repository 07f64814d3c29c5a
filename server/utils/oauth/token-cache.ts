import type { ApiKeyScopes } from '#shared/utils/api-keys'
import { listen, notificationsHealthy, onReconnect } from '../db/notifications'

/**
 * The access tokens this instance has verified, by the hash of the token, as key-cache.ts keeps
 * API keys and with the same bounds: every change of a grant (revoked, deleted) and of its user's
 * membership of its team (role changed, removed) notifies oauth_grant_changed with the grant's id
 * and every instance forgets that grant's tokens; the instance that makes a change forgets them
 * before it answers. Without the notification connection nothing is trusted for more than 5 s
 * after it was verified, and everything is forgotten when it is lost and again when it is back.
 * Expiry is checked against the clock on every request. The embedded database keeps no cache.
 */

export interface CachedGrantToken {
  grantId: string
  clientId: string
  clientName: string
  teamId: string
  userId: string
  /** The grant's scopes capped by the user's role when verified. */
  scopes: ApiKeyScopes
  /** When the token expires (ms since the epoch). */
  expiresAt: number
  /** When it was verified against the database (ms since the epoch). */
  verifiedAt: number
}

const untrustedAfterMs = 5_000
const maxEntries = 50_000

const entries = new Map<string, CachedGrantToken>()
const hashesByGrant = new Map<string, Set<string>>()
let generation = 0
let listening: Promise<void> | undefined

function forgetAll() {
  generation++
  entries.clear()
  hashesByGrant.clear()
}

/** Forgets every token of this grant, here and now. */
export function forgetGrant(grantId: string): void {
  generation++
  for (const hash of hashesByGrant.get(grantId) ?? []) entries.delete(hash)
  hashesByGrant.delete(grantId)
}

/** Starts listening for grant changes (once). */
export function listenForGrantChanges(): Promise<void> {
  listening ??= (async () => {
    onReconnect(forgetAll)
    await listen('oauth_grant_changed', forgetGrant)
  })()
  return listening
}

/** The cached token of this hash when it may be trusted right now. */
export function cachedGrantToken(hash: string): CachedGrantToken | undefined {
  const entry = entries.get(hash)
  if (!entry) return undefined
  if (!notificationsHealthy() && Date.now() - entry.verifiedAt > untrustedAfterMs) {
    entries.delete(hash)
    hashesByGrant.get(entry.grantId)?.delete(hash)
    return undefined
  }
  return entry
}

export function grantCacheGeneration(): number {
  return generation
}

/** Caches a verified token, unless a grant was forgotten since the look-up began. */
export function rememberGrantToken(hash: string, token: CachedGrantToken, lookupGeneration: number): void {
  if (lookupGeneration !== generation) return
  if (entries.size >= maxEntries) {
    const oldest = entries.keys().next().value
    if (oldest !== undefined) {
      hashesByGrant.get(entries.get(oldest)!.grantId)?.delete(oldest)
      entries.delete(oldest)
    }
  }
  entries.set(hash, token)
  let hashes = hashesByGrant.get(token.grantId)
  if (!hashes) hashesByGrant.set(token.grantId, hashes = new Set())
  hashes.add(hash)
}
