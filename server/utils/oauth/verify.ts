import type { H3Event } from 'h3'
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import type { Database } from '../db-drivers'
import { enforceRateLimit, takeKeyRequest } from '../rate-limits'
import { noteApiCredential } from '../api-log/recorder'
import { hashSecret } from './config'
import { resolveGrantToken } from '../credentials/principal'

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

/** A refused token: 401 with error="invalid_token" in WWW-Authenticate (the /mcp route adds it), and `code` when the refusal has one. */
export class InvalidAccessToken extends Error {
  constructor(message: string, readonly code?: string) {
    super(message)
  }
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
 * Verifies an access token for /mcp as API keys are verified: it becomes a principal in the
 * credential pipeline (server/utils/credentials/principal.ts: from memory when this instance has
 * verified it, else by one look-up by its hash); refused when unknown, expired, of a revoked grant,
 * when its user is no longer a member of the grant's team, or when the team's two-factor policy
 * refuses its user (InvalidAccessToken). The grant's scopes are capped by the user's role. Counts
 * the request against the grant's own rate limit (429 over it). The grant is also put on
 * `event.context.oauthGrant`.
 */
export async function authGrantToken(event: H3Event, token: string): Promise<AuthenticatedGrant> {
  const db = await useDb()
  const resolved = await resolveGrantToken(db, hashSecret(token))
  // a known token is in its team's API log, refused ones included
  if (resolved.known) noteApiCredential(event, { teamId: resolved.known.team_id, grantId: resolved.known.id })
  if (!resolved.principal) throw new InvalidAccessToken(resolved.refusal, resolved.code)
  const { principal } = resolved
  const grant: AuthenticatedGrant = {
    grantId: principal.id,
    clientId: principal.client!.id,
    clientName: principal.client!.name,
    teamId: principal.teamId,
    userId: principal.actorId,
    scopes: principal.scopes,
  }
  // for whatever records the request (the API log): the grant it was made with
  event.context.oauthGrant = grant
  enforceRateLimit(event, await takeKeyRequest(db, `grant:${grant.grantId}`), 'this connection')
  touchGrant(db, grant.grantId, resolved.recentlyUsed)
  return grant
}
