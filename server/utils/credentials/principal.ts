import type { ApiKeyScopes } from '#shared/utils/api-keys'
import { capScopesByRole } from '#shared/utils/oauth'
import type { Role } from '#shared/permissions'
import type { Database } from '../db-drivers'
import { defineCounter } from '../metrics'
import { listen, notificationsHealthy, onReconnect } from '../notifications'

/**
 * The one credential pipeline: a team API key (on /api/v1, /rest/v1, /mcp, the event stream or the
 * realtime socket) and an OAuth access token (on /mcp) each become one principal here: its team, the
 * person it acts for, what it may touch, where it came from, and whether the team's two-factor
 * policy refuses that person. Session routes share the policy's rule (twoFactorBlockedFromSql).
 *
 * Principals are kept in memory by the hash of the credential, so that a request with a known
 * credential runs no statement to authenticate. Postgres stays the truth:
 * - a change of a key (revoke, roll, expiry, scopes, delete) notifies api_key_changed with its id;
 * - a change of a grant, or of its user's membership of its team, notifies oauth_grant_changed with its id;
 * - a change of a person's factors notifies credential_owner_changed with `user:<id>`, a change of a
 *   team's two-factor policy `team:<id>`, a change of a member's role `user:<id>`;
 * and every instance forgets the principals concerned; the instance that makes a change forgets
 * them itself before it answers. While the notification connection is down nothing cached is
 * trusted for longer than 5 s after it was verified, and the cache is emptied when the connection
 * is lost and again when it is back. Expiry and the policy's start are checked against the clock
 * on every request. A key once found revoked is refused by this instance from then on. The
 * embedded database (one process, where SQL may also arrive through its socket, which does not
 * notify) keeps no cache: every request looks its credential up.
 */

/** Where a principal came from. */
export type PrincipalSource = 'api_key' | 'oauth_grant'

/** What a request with a credential acts as, and what the cache needs to judge it. */
export interface Principal {
  source: PrincipalSource
  /** The key's id, or the grant's. */
  id: string
  teamId: string
  /** The person it acts for: the key's creator, the grant's user. */
  actorId: string
  /** What it may touch: the key's scopes, or the grant's capped by the user's role when verified. */
  scopes: ApiKeyScopes
  /** The grant's client (OAuth only). */
  client?: { id: string, name: string }
  /** When the credential expires (ms since the epoch), or null. */
  expiresAt: number | null
  /** From when the team's policy refuses the actor for lack of a second factor (ms since the epoch), or null. */
  twoFactorBlockedFrom: number | null
  /** When it was verified against the database (ms since the epoch). */
  verifiedAt: number
}

/** How long an entry is trusted without a notification connection. */
const untrustedAfterMs = 5_000
/** Entries kept at most (past it the oldest go first). */
const maxEntries = 50_000

/** Verified principals by `<source>:<hash>`. */
const entries = new Map<string, Principal>()
/** The cache keys of each key or grant id. */
const cacheKeysById = new Map<string, Set<string>>()
/** Keys this instance found revoked, by hash: never served again (their ids and teams, for the API log). */
const revokedHashes = new Map<string, KnownCredential>()
/** Bumped on every forget: a look-up that began before it must not cache what it read. */
let generation = 0
let listening: Promise<void> | undefined

function forgetAll() {
  generation++
  entries.clear()
  cacheKeysById.clear()
}

function drop(cacheKey: string) {
  const entry = entries.get(cacheKey)
  if (!entry) return
  entries.delete(cacheKey)
  const keys = cacheKeysById.get(entry.id)
  keys?.delete(cacheKey)
  if (keys?.size === 0) cacheKeysById.delete(entry.id)
}

/** Forgets the principals of this key or grant id (changed or deleted), here and now. */
export function forgetCredential(id: string): void {
  generation++
  for (const cacheKey of cacheKeysById.get(id) ?? []) entries.delete(cacheKey)
  cacheKeysById.delete(id)
}

/** Forgets the principals that act for this person, or belong to this team (`user:<id>`, `team:<id>`), here and now. */
export function forgetPrincipalsOf(owner: string): void {
  generation++
  const [kind, id] = owner.split(':', 2)
  if (!id) return
  for (const [cacheKey, entry] of entries) {
    if ((kind === 'user' && entry.actorId === id) || (kind === 'team' && entry.teamId === id)) drop(cacheKey)
  }
}

/** Starts listening for credential changes (once); resolves when listening or registered for the next connection. */
export function listenForCredentialChanges(): Promise<void> {
  listening ??= (async () => {
    onReconnect(forgetAll)
    await Promise.all([
      listen('api_key_changed', forgetCredential),
      listen('oauth_grant_changed', forgetCredential),
      listen('credential_owner_changed', forgetPrincipalsOf),
    ])
  })()
  return listening
}

function cachedPrincipal(cacheKey: string): Principal | undefined {
  const entry = entries.get(cacheKey)
  if (!entry) return undefined
  if (!notificationsHealthy() && Date.now() - entry.verifiedAt > untrustedAfterMs) {
    drop(cacheKey)
    return undefined
  }
  return entry
}

/** Caches a verified principal, unless something was forgotten since the look-up began (its answer may be stale). */
function rememberPrincipal(cacheKey: string, principal: Principal, lookupGeneration: number): void {
  if (lookupGeneration !== generation) return
  if (entries.size >= maxEntries) {
    const oldest = entries.keys().next().value
    if (oldest !== undefined) drop(oldest)
  }
  entries.set(cacheKey, principal)
  let keys = cacheKeysById.get(principal.id)
  if (!keys) cacheKeysById.set(principal.id, keys = new Set())
  keys.add(cacheKey)
}

/**
 * From when the team's policy refuses the person `userColumn` (ms since the epoch; null when it
 * does not): the policy covers them (everyone, or admins and they are an owner or an admin of the
 * team `t` through the membership `m`) and they have no verified factor. A policy with no start
 * (set by hand) holds from the start of time. One expression for keys, grants and sessions.
 */
export function twoFactorBlockedFromSql(userColumn: string, t = 't', m = 'm'): string {
  return `case when ${m}.user_id is not null
      and (${t}.require_two_factor = 'everyone' or (${t}.require_two_factor = 'admins' and ${m}.role in ('owner', 'admin')))
      and not exists (select 1 from public.auth_factors f where f.user_id = ${userColumn} and f.verified_at is not null)
    then coalesce(extract(epoch from ${t}.two_factor_enforced_from)::float8 * 1000, 0) end`
}

/** Whether the policy refuses a principal (or a member) whose block starts at `blockedFrom`, now. */
export function isTwoFactorBlocked(blockedFrom: number | null): boolean {
  return blockedFrom !== null && blockedFrom <= Date.now()
}

/** The message and code of a refusal for lack of a second factor. */
export const twoFactorRequired = {
  code: 'two_factor_required',
  keyMessage: 'The team requires two-factor authentication, and the member who made this credential has not set up a second factor; it works again once they do',
  memberMessage: 'This team requires two-factor authentication: set up an authenticator app or a passkey in your account\'s Security settings to reach its data',
} as const

/** A credential's id and team, for the API log, when it is known (refused ones included). */
export interface KnownCredential {
  id: string
  team_id: string
}

/** A credential resolved: its principal, or why it is refused (with `code` when the refusal has one). */
export type Resolution
  = | { principal: Principal, recentlyUsed: boolean, known: KnownCredential }
    | { principal?: undefined, refusal: string, code?: string, known?: KnownCredential }

/**
 * The key's look-up ($1 the key's hash): by a unique index, so no secret is compared in
 * JavaScript; it answers plain values (the expiry in ms since the epoch), nothing to parse.
 */
const keyLookupSql = `select k.id, k.team_id, k.created_by, k.scopes, k.revoked_at is not null as revoked,
    k.expires_at is not null and k.expires_at <= now() as expired,
    extract(epoch from k.expires_at)::float8 * 1000 as expires_at_ms,
    coalesce(k.last_used_at > now() - interval '1 minute', false) as recently_used,
    ${twoFactorBlockedFromSql('k.created_by')} as blocked_from_ms
  from public.api_keys k
  join public.teams t on t.id = k.team_id
  left join public.team_members m on m.team_id = k.team_id and m.user_id = k.created_by
  where k.key_hash = $1`

interface KeyLookupRow {
  id: string
  team_id: string
  created_by: string
  scopes: ApiKeyScopes
  revoked: boolean
  expired: boolean
  expires_at_ms: number | null
  recently_used: boolean
  blocked_from_ms: number | null
}

const tokenLookupSql = `select g.id as grant_id, g.client_id, g.client_name, g.team_id, g.user_id, g.scopes,
    g.revoked_at is not null as revoked, m.role, tk.expires_at <= now() as expired,
    extract(epoch from tk.expires_at)::float8 * 1000 as expires_at_ms,
    coalesce(g.last_used_at > now() - interval '1 minute', false) as recently_used,
    ${twoFactorBlockedFromSql('g.user_id')} as blocked_from_ms
  from public.oauth_tokens tk
  join public.oauth_grants g on g.id = tk.grant_id
  join public.teams t on t.id = g.team_id
  left join public.team_members m on m.team_id = g.team_id and m.user_id = g.user_id
  where tk.token_hash = $1 and tk.kind = 'access'`

interface TokenLookupRow {
  grant_id: string
  client_id: string
  client_name: string
  team_id: string
  user_id: string
  scopes: ApiKeyScopes
  revoked: boolean
  role: Role | null
  expired: boolean
  expires_at_ms: number
  recently_used: boolean
  blocked_from_ms: number | null
}

const keyCacheHits = defineCounter('api_key_cache_hits_total', 'Public API requests whose key this instance had in memory')
const keyCacheMisses = defineCounter('api_key_cache_misses_total', 'Public API requests whose key was looked up in the database (unknown to this instance, or dropped)')

/** The checks of every request against a principal, from memory: expiry, then the team's policy. */
function admit(principal: Principal, recentlyUsed: boolean, expiredMessage: string): Resolution {
  const known = { id: principal.id, team_id: principal.teamId }
  if (principal.expiresAt !== null && principal.expiresAt <= Date.now()) return { refusal: expiredMessage, known }
  if (isTwoFactorBlocked(principal.twoFactorBlockedFrom)) return { refusal: twoFactorRequired.keyMessage, code: twoFactorRequired.code, known }
  return { principal, recentlyUsed, known }
}

/**
 * The principal of a team API key by its hash (server/utils/api-keys.ts hashes it), or why it is
 * refused: unknown, revoked, expired, or its creator refused by the team's two-factor policy.
 */
export async function resolveApiKey(db: Database, hash: string): Promise<Resolution> {
  const revoked = revokedHashes.get(hash)
  if (revoked) return { refusal: 'This API key has been revoked', known: revoked }
  const cacheKey = `key:${hash}`
  const isCached = db.kind === 'postgres'
  if (isCached) await listenForCredentialChanges()
  const cached = isCached ? cachedPrincipal(cacheKey) : undefined
  if (isCached) (cached ? keyCacheHits : keyCacheMisses)().inc()
  if (cached) return admit(cached, false, 'This API key has expired')
  const lookupGeneration = generation
  const { rows } = await db.query<KeyLookupRow>(keyLookupSql, [hash], { prepare: true })
  const found = rows[0]
  if (!found) return { refusal: 'Unknown API key' }
  const known = { id: found.id, team_id: found.team_id }
  if (found.revoked) {
    if (revokedHashes.size < maxEntries) revokedHashes.set(hash, known)
    forgetCredential(found.id)
    return { refusal: 'This API key has been revoked', known }
  }
  if (found.expired) return { refusal: 'This API key has expired', known }
  const principal: Principal = {
    source: 'api_key',
    id: found.id,
    teamId: found.team_id,
    actorId: found.created_by,
    scopes: found.scopes,
    expiresAt: found.expires_at_ms,
    twoFactorBlockedFrom: found.blocked_from_ms,
    verifiedAt: Date.now(),
  }
  if (isCached) rememberPrincipal(cacheKey, principal, lookupGeneration)
  return admit(principal, found.recently_used, 'This API key has expired')
}

const tokenExpired = 'This access token has expired; use the refresh token'

/**
 * The principal of an OAuth access token by its hash, or why it is refused: unknown, expired, of a
 * revoked grant, of a user no longer a member of the grant's team, or of a user refused by the
 * team's two-factor policy. The grant's scopes are capped by the user's role.
 */
export async function resolveGrantToken(db: Database, hash: string): Promise<Resolution> {
  const cacheKey = `grant:${hash}`
  const isCached = db.kind === 'postgres'
  if (isCached) await listenForCredentialChanges()
  const cached = isCached ? cachedPrincipal(cacheKey) : undefined
  if (cached) return admit(cached, false, tokenExpired)
  const lookupGeneration = generation
  const { rows } = await db.query<TokenLookupRow>(tokenLookupSql, [hash], { prepare: true })
  const found = rows[0]
  if (!found) return { refusal: 'Unknown access token' }
  const known = { id: found.grant_id, team_id: found.team_id }
  if (found.revoked) return { refusal: 'This connection has been revoked', known }
  if (found.expired) return { refusal: tokenExpired, known }
  if (!found.role) return { refusal: 'The user who made this connection is no longer a member of its team', known }
  const principal: Principal = {
    source: 'oauth_grant',
    id: found.grant_id,
    teamId: found.team_id,
    actorId: found.user_id,
    scopes: capScopesByRole(found.scopes, found.role),
    client: { id: found.client_id, name: found.client_name },
    expiresAt: found.expires_at_ms,
    twoFactorBlockedFrom: found.blocked_from_ms,
    verifiedAt: Date.now(),
  }
  if (isCached) rememberPrincipal(cacheKey, principal, lookupGeneration)
  return admit(principal, found.recently_used, tokenExpired)
}
