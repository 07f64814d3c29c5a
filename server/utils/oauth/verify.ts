import type { H3Event } from 'h3'
import { capScopesByRole } from '#shared/utils/oauth'
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import type { Role } from '#shared/permissions'
import type { Database } from '../db/db-drivers'
import { enforceRateLimit, takeKeyRequest } from '../credentials/rate-limits'
import { noteApiCredential } from '../api-log/recorder'
import { hashSecret } from './config'
import { cachedGrantToken, grantCacheGeneration, listenForGrantChanges, rememberGrantToken, type CachedGrantToken } from './token-cache'
import { useDb } from '../db/database'

/** What a request with an OAuth access token acts as: the grant, its client, team and user, and its scopes now. */
export interface AuthenticatedGrant {
  /** The grant's id (the connection), also the source_ref of its writes. */
  grantId: string
  clientId: string
  clientName: string
  teamId: string
  userId: string
  /** The grant's per-table scopes, capped by what the user's role allows now. */
  scopes: ApiKeyScopes
}

/** A refused token: 401 with error="invalid_token" in WWW-Authenticate (the /mcp route adds it). */
export class InvalidAccessToken extends Error {}

const tokenLookupSql = `select g.id as grant_id, g.client_id, g.client_name, g.team_id, g.user_id, g.scopes,
    g.revoked_at is not null as revoked, m.role, t.expires_at <= now() as expired,
    extract(epoch from t.expires_at)::float8 * 1000 as expires_at_ms,
    coalesce(g.last_used_at > now() - interval '1 minute', false) as recently_used
  from public.oauth_tokens t
  join public.oauth_grants g on g.id = t.grant_id
  left join public.team_members m on m.team_id = g.team_id and m.user_id = g.user_id
  where t.token_hash = $1 and t.kind = 'access'`

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
}

const touchInterval = 60_000
const lastTouched = new Map<string, number>()

/** Records that a grant was used, at most once a minute per grant, off the response path. */
function touchGrant(db: Database, grantId: string, recentlyUsed: boolean) {
  const now = Date.now()
  if (now - (lastTouched.get(grantId) ?? 0) < touchInterval) return
  lastTouched.set(grantId, now)
  if (lastTouched.size > 50_000) lastTouched.clear()
  if (recentlyUsed) return
  db.query(
    `update public.oauth_grants set last_used_at = now()
     where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
    [grantId],
  ).catch(error => console.error('[oauth] could not record last_used_at for grant', grantId, error))
}

/**
 * Verifies an access token for /mcp as API keys are verified: from memory when this instance has
 * verified it (token-cache.ts says for how long), else by one look-up by its hash; refused when
 * unknown, expired, of a revoked grant, or when its user is no longer a member of the grant's team
 * (InvalidAccessToken). The grant's scopes are capped by the user's role. Counts the request
 * against the grant's own rate limit (429 over it). The grant is also put on
 * `event.context.oauthGrant`.
 */
export async function authGrantToken(event: H3Event, token: string): Promise<AuthenticatedGrant> {
  const db = await useDb()
  const hash = hashSecret(token)
  const isCached = db.kind === 'postgres'
  if (isCached) await listenForGrantChanges()
  let cached: CachedGrantToken | undefined = isCached ? cachedGrantToken(hash) : undefined
  let recentlyUsed = false
  if (!cached) {
    const generation = grantCacheGeneration()
    const { rows } = await db.query<TokenLookupRow>(tokenLookupSql, [hash], { prepare: true })
    const found = rows[0]
    if (!found) throw new InvalidAccessToken('Unknown access token')
    // a known token is in its team's API log, refused ones included
    noteApiCredential(event, { teamId: found.team_id, grantId: found.grant_id })
    if (found.revoked) throw new InvalidAccessToken('This connection has been revoked')
    if (found.expired) throw new InvalidAccessToken('This access token has expired; use the refresh token')
    if (!found.role) throw new InvalidAccessToken('The user who made this connection is no longer a member of its team')
    cached = {
      grantId: found.grant_id,
      clientId: found.client_id,
      clientName: found.client_name,
      teamId: found.team_id,
      userId: found.user_id,
      scopes: capScopesByRole(found.scopes, found.role),
      expiresAt: found.expires_at_ms,
      verifiedAt: Date.now(),
    }
    recentlyUsed = found.recently_used
    if (isCached) rememberGrantToken(hash, cached, generation)
  }
  noteApiCredential(event, { teamId: cached.teamId, grantId: cached.grantId })
  if (cached.expiresAt <= Date.now()) throw new InvalidAccessToken('This access token has expired; use the refresh token')
  const grant: AuthenticatedGrant = {
    grantId: cached.grantId,
    clientId: cached.clientId,
    clientName: cached.clientName,
    teamId: cached.teamId,
    userId: cached.userId,
    scopes: cached.scopes,
  }
  // for whatever records the request (the API log): the grant it was made with
  event.context.oauthGrant = grant
  enforceRateLimit(event, await takeKeyRequest(db, `grant:${grant.grantId}`), 'this connection')
  touchGrant(db, grant.grantId, recentlyUsed)
  return grant
}
