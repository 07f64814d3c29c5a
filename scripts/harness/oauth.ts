import { createHash, randomBytes } from 'node:crypto'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import type { TestApp } from './app'
import type { Client } from './http'

/** An agent's OAuth client state, in memory: what the MCP SDK's auth() reads and saves. */
export class MemoryOAuthProvider implements OAuthClientProvider {
  information?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier = ''
  /** Where auth() sent the user (the authorization endpoint with its parameters). */
  authorizationUrl?: URL

  constructor(readonly redirectUri: string, readonly scope = 'mcp:read mcp:write', readonly name = 'Test Agent') {}

  get redirectUrl() {
    return this.redirectUri
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: this.scope,
    }
  }

  clientInformation() {
    return this.information
  }

  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information
  }

  tokens() {
    return this.saved
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }

  codeVerifier() {
    return this.verifier
  }
}

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string, challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** Registers a public client (RFC 7591) and answers its client_id. */
export async function registerClient(app: Pick<TestApp, 'url'>, redirectUris: string[], name = 'Raw Agent'): Promise<string> {
  const answer = await fetch(`${app.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }),
  })
  if (answer.status !== 201) throw new Error(`registration failed: ${answer.status} ${await answer.text()}`)
  return (await answer.json()).client_id
}

export interface AuthorizationParams {
  clientId: string
  redirectUri: string
  challenge: string
  state?: string
  scope?: string
  resource?: string
}

/** The authorization endpoint's URL for these parameters. */
export function authorizeUrl(app: Pick<TestApp, 'url'>, params: AuthorizationParams): string {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
    code_challenge: params.challenge,
    code_challenge_method: 'S256',
    state: params.state ?? 'st-1',
    scope: params.scope ?? 'mcp:read mcp:write',
    ...(params.resource === undefined ? { resource: `${app.url}/mcp` } : params.resource ? { resource: params.resource } : {}),
  })
  return `${app.url}/oauth/authorize?${query}`
}

/** Opens the authorization endpoint as the user's browser would: answers where it sends the browser. */
export async function startAuthorization(user: Client, params: AuthorizationParams): Promise<string> {
  const answer = await fetch(authorizeUrl(user.app, params), { redirect: 'manual', headers: user.cookie ? { cookie: user.cookie } : {} })
  if (answer.status !== 302) throw new Error(`authorize answered ${answer.status}: ${await answer.text()}`)
  return answer.headers.get('location')!
}

/** The consent request id of a consent page address. */
export const requestIdOf = (location: string) => new URL(location, 'http://x').searchParams.get('request')!

/** Runs the authorization as `user`, approving `access` in `teamId`: answers the code. */
export async function approve(user: Client, params: AuthorizationParams, teamId: string, access: Record<string, string>): Promise<string> {
  const requestId = requestIdOf(await startAuthorization(user, params))
  const answer = await user.post(`/api/oauth/requests/${requestId}`, { decision: 'approve', team_id: teamId, access })
  if (answer.status !== 200) throw new Error(`approval failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  return new URL(answer.body.redirect_to).searchParams.get('code')!
}

/** POSTs a form to the token endpoint; answers status and body. */
export async function tokenRequest(app: Pick<TestApp, 'url'>, form: Record<string, string>): Promise<{ status: number, body: any }> {
  const answer = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })
  return { status: answer.status, body: await answer.json() }
}

/** The whole flow without a browser: register, approve, exchange; answers the tokens and the client_id. */
export async function connectApp(user: Client, teamId: string, access: Record<string, string>, redirectUri = 'http://127.0.0.1:9/callback'): Promise<{ clientId: string, tokens: OAuthTokens }> {
  const app = user.app
  const clientId = await registerClient(app, [redirectUri])
  const { verifier, challenge } = pkce()
  const code = await approve(user, { clientId, redirectUri, challenge }, teamId, access)
  const { status, body } = await tokenRequest(app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId, resource: `${app.url}/mcp` })
  if (status !== 200) throw new Error(`exchange failed: ${status} ${JSON.stringify(body)}`)
  return { clientId, tokens: body }
}
