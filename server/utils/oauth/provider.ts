import type { OAuthServerProvider, AuthorizationParams } from '@modelcontextprotocol/sdk/server/auth/provider.js'
import { InvalidGrantError, InvalidScopeError, InvalidTargetError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js'
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import type { Queryable } from '../db/db-drivers'
import { clientsStore } from './clients'
import { accessTokenLifetimeSeconds, hashSecret, mcpResource, newSecret, oauthScopes, refreshTokenLifetimeSeconds } from './config'
import { forgetGrant } from './token-cache'
import { useDb } from '../db/database'

type AuthorizeResponse = Parameters<OAuthServerProvider['authorize']>[2]

/** The `resource` as one string to compare (URL-normalized), or null when none was given. */
function normalizedResource(resource: URL | string | undefined | null): string | null {
  if (!resource) return null
  const url = new URL(resource)
  url.hash = ''
  return url.href
}

/** The OAuth scope string of table scopes: writing anywhere is mcp:write. */
function scopeString(scopes: ApiKeyScopes): string {
  return Object.values(scopes).includes('write') ? 'mcp:read mcp:write' : 'mcp:read'
}

/** Issues an access token (1 hour) and a refresh token (30 days) of the grant. */
async function issueTokens(tx: Queryable, grantId: string, scopes: ApiKeyScopes): Promise<OAuthTokens> {
  const accessToken = newSecret('access')
  const refreshToken = newSecret('refresh')
  await tx.query(
    `insert into public.oauth_tokens (token_hash, grant_id, kind, expires_at)
     values ($1, $3, 'access', now() + make_interval(secs => $4)), ($2, $3, 'refresh', now() + make_interval(secs => $5))`,
    [hashSecret(accessToken), hashSecret(refreshToken), grantId, accessTokenLifetimeSeconds, refreshTokenLifetimeSeconds],
  )
  return { access_token: accessToken, token_type: 'Bearer', expires_in: accessTokenLifetimeSeconds, refresh_token: refreshToken, scope: scopeString(scopes) }
}

interface CodeRow {
  client_id: string
  team_id: string
  user_id: string
  scopes: ApiKeyScopes
  redirect_uri: string
  code_challenge: string
  resource: string | null
  grant_id: string | null
  used: boolean
  expired: boolean
}

/**
 * The authorization server's part that is ours, behind the MCP SDK's handlers (which parse and
 * check the requests, verify PKCE S256 and answer RFC 6749 errors): pending requests go to the
 * consent page; codes, grants and tokens live in Postgres, hashed.
 */
export class GrantProvider implements OAuthServerProvider {
  constructor(private readonly origin: string) {}

  get clientsStore() {
    return clientsStore
  }

  /** Keeps the request for the consent page and sends the browser there (the user signs in first when needed). */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: AuthorizeResponse): Promise<void> {
    const resource = normalizedResource(params.resource)
    if (resource !== null && resource !== mcpResource(this.origin)) throw new InvalidTargetError(`resource must be ${mcpResource(this.origin)}`)
    const scopes = (params.scopes ?? []).filter(Boolean)
    const unknown = scopes.find(scope => !(oauthScopes as readonly string[]).includes(scope))
    if (unknown) throw new InvalidScopeError(`Unknown scope ${unknown.slice(0, 50)}; this server knows ${oauthScopes.join(' and ')}`)
    const db = await useDb()
    await db.query(`delete from public.oauth_requests where expires_at < now() - interval '1 hour'`)
    const { rows } = await db.query<{ id: string }>(
      `insert into public.oauth_requests (client_id, redirect_uri, code_challenge, state, scopes, resource)
       values ($1, $2, $3, $4, $5, $6) returning id`,
      [client.client_id, params.redirectUri, params.codeChallenge, params.state ?? null, scopes.length ? scopes : [...oauthScopes], resource],
    )
    res.redirect(302, `/oauth/consent?request=${rows[0]!.id}`)
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string): Promise<string> {
    const db = await useDb()
    const { rows } = await db.query<{ code_challenge: string }>(
      'select code_challenge from public.oauth_codes where code_hash = $1 and client_id = $2',
      [hashSecret(authorizationCode), client.client_id],
    )
    if (!rows[0]) throw new InvalidGrantError('Unknown authorization code')
    return rows[0].code_challenge
  }

  /**
   * Exchanges a code once, within 60 s, with the same redirect_uri and resource, for the grant's
   * first tokens. A code presented again revokes the grant it made.
   */
  async exchangeAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string, _codeVerifier?: string, redirectUri?: string, resource?: URL): Promise<OAuthTokens> {
    const db = await useDb()
    const requested = normalizedResource(resource)
    if (requested !== null && requested !== mcpResource(this.origin)) throw new InvalidTargetError(`resource must be ${mcpResource(this.origin)}`)
    const outcome = await db.transaction(async (tx): Promise<{ tokens: OAuthTokens } | { reusedGrant: string | null }> => {
      const { rows } = await tx.query<CodeRow>(
        `select client_id, team_id, user_id, scopes, redirect_uri, code_challenge, resource, grant_id,
           used_at is not null as used, expires_at <= now() as expired
         from public.oauth_codes where code_hash = $1 and client_id = $2 for update`,
        [hashSecret(authorizationCode), client.client_id],
      )
      const code = rows[0]
      if (!code) throw new InvalidGrantError('Unknown authorization code')
      if (code.used) {
        if (code.grant_id) await tx.query('update public.oauth_grants set revoked_at = now() where id = $1 and revoked_at is null', [code.grant_id])
        return { reusedGrant: code.grant_id }
      }
      if (code.expired) throw new InvalidGrantError('The authorization code has expired (codes last 60 seconds)')
      if (redirectUri !== code.redirect_uri) throw new InvalidGrantError('redirect_uri must be the one of the authorization request')
      if (code.resource !== null && requested !== code.resource) throw new InvalidTargetError('resource must be the one of the authorization request')
      const { rows: grants } = await tx.query<{ id: string }>(
        `insert into public.oauth_grants (client_id, client_name, team_id, user_id, scopes)
         select c.client_id, c.client_name, $2, $3, $4 from public.oauth_clients c where c.client_id = $1
         returning id`,
        [client.client_id, code.team_id, code.user_id, JSON.stringify(code.scopes)],
      )
      const grantId = grants[0]!.id
      await tx.query('update public.oauth_codes set used_at = now(), grant_id = $2 where code_hash = $1', [hashSecret(authorizationCode), grantId])
      return { tokens: await issueTokens(tx, grantId, code.scopes) }
    })
    if ('reusedGrant' in outcome) {
      if (outcome.reusedGrant) forgetGrant(outcome.reusedGrant)
      throw new InvalidGrantError('The authorization code was already used; the connection it made is revoked')
    }
    return outcome.tokens
  }

  /**
   * Rotates a refresh token: the old one stops working and a new pair is issued. A refresh token
   * presented again after it was rotated revokes the whole grant (it may have been stolen).
   */
  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, _scopes?: string[], resource?: URL): Promise<OAuthTokens> {
    const requested = normalizedResource(resource)
    if (requested !== null && requested !== mcpResource(this.origin)) throw new InvalidTargetError(`resource must be ${mcpResource(this.origin)}`)
    const db = await useDb()
    const outcome = await db.transaction(async (tx): Promise<{ tokens: OAuthTokens } | { reusedGrant: string }> => {
      const { rows } = await tx.query<{ grant_id: string, scopes: ApiKeyScopes, revoked: boolean, used: boolean, expired: boolean, is_member: boolean }>(
        `select t.grant_id, g.scopes, g.revoked_at is not null as revoked, t.used_at is not null as used,
           t.expires_at <= now() as expired,
           exists (select 1 from public.team_members m where m.team_id = g.team_id and m.user_id = g.user_id) as is_member
         from public.oauth_tokens t join public.oauth_grants g on g.id = t.grant_id
         where t.token_hash = $1 and t.kind = 'refresh' and g.client_id = $2
         for update of t`,
        [hashSecret(refreshToken), client.client_id],
      )
      const token = rows[0]
      if (!token) throw new InvalidGrantError('Unknown refresh token')
      if (token.revoked) throw new InvalidGrantError('This connection has been revoked')
      if (token.used) {
        await tx.query('update public.oauth_grants set revoked_at = now() where id = $1 and revoked_at is null', [token.grant_id])
        return { reusedGrant: token.grant_id }
      }
      if (token.expired) throw new InvalidGrantError('The refresh token has expired')
      if (!token.is_member) throw new InvalidGrantError('The user who made this connection is no longer a member of its team')
      await tx.query('update public.oauth_tokens set used_at = now() where token_hash = $1', [hashSecret(refreshToken)])
      return { tokens: await issueTokens(tx, token.grant_id, token.scopes) }
    })
    if ('reusedGrant' in outcome) {
      forgetGrant(outcome.reusedGrant)
      throw new InvalidGrantError('The refresh token was already used; the connection is revoked')
    }
    return outcome.tokens
  }

  /** /mcp verifies its tokens itself (from memory, see verify.ts); the SDK's bearer middleware is not used. */
  async verifyAccessToken(_token: string): Promise<AuthInfo> {
    throw new InvalidTokenError('Tokens are verified by the MCP endpoint')
  }

  /** RFC 7009: revokes the token's grant (all its tokens); an unknown token is not an error. */
  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    const db = await useDb()
    const { rows } = await db.query<{ id: string }>(
      `update public.oauth_grants g set revoked_at = now()
       from public.oauth_tokens t
       where t.token_hash = $1 and t.grant_id = g.id and g.client_id = $2 and g.revoked_at is null
       returning g.id`,
      [hashSecret(request.token), client.client_id],
    )
    for (const row of rows) forgetGrant(row.id)
  }
}
