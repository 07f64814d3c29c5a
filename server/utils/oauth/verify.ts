import type { H3Event } from 'h3'
import { LRUCache } from 'lru-cache'
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import type { Role } from '#shared/permissions'
import type { Database } from '../db/db-drivers'
import { enforceRateLimit, takeKeyRequest } from '../credentials/rate-limits'
import { noteApiCredential, noteUnknownApiCredential } from '../api-log/recorder'
import { hashSecret } from './config'
import { resolveGrantToken } from '../credentials/principal'
import { useDb } from '../db/database'
import { logger } from '../log/logger'

const log = logger('oauth')

/** What a request with an OAuth access token acts as: the grant, its client, team and user, and its scopes now. */
export interface AuthenticatedGrant {
  /** The grant's id (the connection), also the source_ref of its writes. */
  grantId: string
  clientId: string
  clientName: string
  teamId: string
  userId: string
  /** The user's role in the team now: the write tools are those of the actions it allows. */
  role: Role
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
/** When each grant was last recorded as used, for the 50 000 grants used last. */
const lastTouched = new LRUCache<string, number>({ max: 50_000 })

/** Records that a grant was used, at most once a minute per grant, off the response path. */
function touchGrant(db: Database, grantId: string, recentlyUsed: boolean) {
  const now = Date.now()
  if (now - (lastTouched.get(grantId) ?? 0) < touchInterval) return
  lastTouched.set(grantId, now)
  if (recentlyUsed) return
  db.query(
    `update public.oauth_grants set last_used_at = now()
     where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
    [grantId],
  ).catch(error => log.error('Could not record last_used_at for a grant', { grantId, error }))
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
  else noteUnknownApiCredential(event)
  if (!resolved.principal) throw new InvalidAccessToken(resolved.refusal, resolved.code)
  const { principal } = resolved
  const grant: AuthenticatedGrant = {
    grantId: principal.id,
    clientId: principal.client!.id,
    clientName: principal.client!.name,
    teamId: principal.teamId,
    userId: principal.actorId,
    role: principal.role!,
    scopes: principal.scopes,
  }
  // for whatever records the request (the API log): the grant it was made with
  event.context.oauthGrant = grant
  enforceRateLimit(event, await takeKeyRequest(db, `grant:${grant.grantId}`), 'this connection')
  touchGrant(db, grant.grantId, resolved.recentlyUsed)
  return grant
}
