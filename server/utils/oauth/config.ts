import { hash, randomBytes } from 'node:crypto'
import type { H3Event } from 'h3'
import { setting } from '../settings'

/** The scopes the authorization server knows: reading, and reading and writing. */
export const oauthScopes = ['mcp:read', 'mcp:write'] as const
export type OAuthScope = typeof oauthScopes[number]

/** How long an authorization code may be exchanged (seconds). */
export const codeLifetimeSeconds = 60
/** How long an access token is good for (seconds). */
export const accessTokenLifetimeSeconds = 60 * 60
/** How long a refresh token is good for (seconds). */
export const refreshTokenLifetimeSeconds = 30 * 24 * 60 * 60

/** Access tokens start with this, so that /mcp tells them from API keys without a look-up. */
export const accessTokenPrefix = 'mcpat_'
const refreshTokenPrefix = 'mcprt_'

/** The app's public origin: BASE_URL when set, else the request's. */
export function oauthOrigin(event: H3Event): string {
  return (setting('baseUrl') || getRequestURL(event).origin).replace(/\/+$/, '')
}

/** The one resource tokens are issued for: the MCP endpoint. */
export const mcpResource = (origin: string) => `${origin}/mcp`

/** Where the protected resource metadata of /mcp is served. */
export const resourceMetadataUrl = (origin: string) => `${origin}/.well-known/oauth-protected-resource/mcp`

/** The lowercase hex SHA-256 of a code or token, as stored. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret)
}

/** A new opaque secret: 32 random bytes, base64url, after its kind's prefix. */
export function newSecret(kind: 'code' | 'access' | 'refresh'): string {
  const random = randomBytes(32).toString('base64url')
  return kind === 'access' ? `${accessTokenPrefix}${random}` : kind === 'refresh' ? `${refreshTokenPrefix}${random}` : random
}
