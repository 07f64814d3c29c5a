import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { signUp, teamWithRoles, type Client, type TeamFixture } from '../support/http'
import { approve, authorizeUrl, connectApp, MemoryOAuthProvider, pkce, registerClient, requestIdOf, startAuthorization, tokenRequest } from '../support/oauth'
import { waitFor } from '../support/wait'

// Agents that sign in: the MCP authorization flow against the built app, with the MCP SDK's own
// client (discovery, registration, PKCE, the code exchange) and the consent page in Chromium.
let app: TestApp
let fx: TeamFixture
let otherTeamId: string
let browser: Browser | undefined
const password = 'correct horse battery'

beforeAll(async () => {
  app = await startApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' })
  fx = await teamWithRoles(app)
  otherTeamId = (await fx.outsider.get('/api/auth/me')).body.teams.find((t: { name: string }) => t.name === 'Other Team').id
  await app.db.query(`insert into public.tasks (team_id, created_by, title) values ($1, $2, 'Team task')`, [fx.teamId, fx.owner.user!.id])
  await app.db.query(`insert into public.tasks (team_id, created_by, title) values ($1, $2, 'OTHER-TEAM-SECRET')`, [otherTeamId, fx.outsider.user!.id])
})
afterAll(async () => {
  await browser?.close()
  await app?.stop()
})

const mcpPost = (token: string, body: unknown) => fetch(`${app.url}/mcp`, {
  method: 'POST',
  headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' },
  body: JSON.stringify(body),
})

async function mcpClient(token: string): Promise<McpClient> {
  const client = new McpClient({ name: 'oauth-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

const toolNames = async (token: string) => (await (await mcpClient(token)).listTools()).tools.map(tool => tool.name).sort()

describe('discovery', () => {
  it('serves the protected resource metadata (path and root forms) and the authorization server metadata', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const answer = await fetch(`${app.url}${path}`)
      expect(answer.status).toBe(200)
      expect(await answer.json()).toMatchObject({
        resource: `${app.url}/mcp`,
        authorization_servers: [app.url],
        scopes_supported: ['mcp:read', 'mcp:write'],
        bearer_methods_supported: ['header'],
      })
    }
    const metadata = await (await fetch(`${app.url}/.well-known/oauth-authorization-server`)).json()
    expect(metadata).toMatchObject({
      issuer: app.url,
      authorization_endpoint: `${app.url}/oauth/authorize`,
      token_endpoint: `${app.url}/oauth/token`,
      registration_endpoint: `${app.url}/oauth/register`,
      revocation_endpoint: `${app.url}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['mcp:read', 'mcp:write'],
      client_id_metadata_document_supported: true,
    })
    expect(metadata.token_endpoint_auth_methods_supported).toContain('none')
  })

  it('answers a 401 from /mcp with the resource metadata, and invalid_token when a token was sent', async () => {
    const bare = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(bare.status).toBe(401)
    expect(bare.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`)
    for (const token of ['mcpat_not-a-token', 'not-a-key']) {
      const answer = await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
      expect(answer.status).toBe(401)
      expect(answer.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`)
    }
  })
})

describe('the whole flow with the MCP SDK client and the consent page in Chromium', () => {
  it('discovers, registers, signs in, approves per table, exchanges the code, then lists and calls tools', async () => {
    const callback = 'http://127.0.0.1:45999/callback'
    const provider = new MemoryOAuthProvider(callback, 'mcp:read mcp:write', 'Claude Test')
    const serverUrl = new URL(`${app.url}/mcp`)
    // the client finds the server's OAuth metadata from the 401, registers and sends the user away
    const first = new McpClient({ name: 'oauth-agent', version: '1.0.0' })
    await expect(first.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }))).rejects.toThrow(/Unauthorized/i)
    expect(provider.information?.client_id).toBeTruthy()
    const authorizationUrl = provider.authorizationUrl!
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${app.url}/oauth/authorize`)
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${app.url}/mcp`)

    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] })
    const page = await browser.newPage()
    // the agent's loopback receiver: the browser lands here with the code
    let landed = ''
    await page.route(`${callback}**`, async (route) => {
      landed = route.request().url()
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'You can close this window.' })
    })
    await page.goto(authorizationUrl.href)
    // signed out: sign in first, then back to the consent page
    await page.waitForURL(/\/login\?redirect=/)
    await page.waitForFunction(() => Boolean((document.querySelector('#__nuxt') as { __vue_app__?: unknown } | null)?.__vue_app__))
    await page.getByLabel('E-mail').fill(fx.admin.user!.email)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL(/\/oauth\/consent\?request=/)
    await page.getByTestId('consent-client').waitFor()
    expect(await page.getByTestId('consent-client').textContent()).toContain('Claude Test')
    expect(await page.getByTestId('consent-redirect-host').textContent()).toContain('127.0.0.1:45999')
    await page.getByRole('group', { name: 'tasks' }).getByRole('radio', { name: 'Read and write' }).click()
    await page.getByRole('group', { name: 'notes' }).getByRole('radio', { name: 'None' }).click()
    await page.getByRole('button', { name: 'Approve' }).click()
    await waitFor('the browser to reach the callback', () => landed || undefined)
    const landedUrl = new URL(landed)
    expect(landedUrl.searchParams.get('state')).toBe(authorizationUrl.searchParams.get('state'))
    const code = landedUrl.searchParams.get('code')!

    expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED')
    expect(provider.saved?.access_token).toMatch(/^mcpat_/)
    expect(provider.saved?.refresh_token).toBeTruthy()
    expect(provider.saved?.expires_in).toBe(3600)

    const client = new McpClient({ name: 'oauth-agent', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }))
    const tools = (await client.listTools()).tools.map(tool => tool.name).sort()
    expect(tools).toEqual(['create_tasks', 'delete_tasks', 'query_database', 'update_tasks'])
    const query = await client.callTool({ name: 'query_database', arguments: { sql: 'select title from tasks order by title' } })
    expect(JSON.stringify(query.structuredContent)).toContain('Team task')
    expect(JSON.stringify(query.structuredContent)).not.toContain('OTHER-TEAM-SECRET')
    const created = await client.callTool({ name: 'create_tasks', arguments: { title: 'Made by the agent' } })
    expect(created.isError).toBeFalsy()
    const recordId = (created.structuredContent as { record: { id: string } }).record.id

    // the write is logged with source mcp, the granting user as actor and the grant as source_ref
    const { rows: [grant] } = await app.db.query('select * from public.oauth_grants where client_id = $1', [provider.information!.client_id])
    expect(grant).toMatchObject({ client_name: 'Claude Test', team_id: fx.teamId, user_id: fx.admin.user!.id, scopes: { tasks: 'write' } })
    const { rows: entries } = await app.db.query('select actor_id, source, source_ref, api_key_id from public.activity_log where record_id = $1', [recordId])
    expect(entries).toEqual([{ actor_id: fx.admin.user!.id, source: 'mcp', source_ref: grant.id, api_key_id: null }])
    const activity = await fx.owner.get(`/api/teams/${fx.teamId}/activity?record_id=${recordId}`)
    expect(activity.body.entries[0]).toMatchObject({ source: 'mcp', source_ref: grant.id, client_name: 'Claude Test' })

    // Connected apps: the owner sees it, and so does its user
    const listed = await fx.owner.get(`/api/teams/${fx.teamId}/grants`)
    expect(listed.body.find((g: { id: string }) => g.id === grant.id)).toMatchObject({ client_name: 'Claude Test', user_name: 'Adam Admin', scopes: { tasks: 'write' }, revoked_at: null })
    await page.close()
  })

  it('denies: back to the app with error=access_denied and its state', async () => {
    const redirectUri = 'http://localhost:7777/cb'
    const clientId = await registerClient(app, [redirectUri])
    const requestId = requestIdOf(await startAuthorization(fx.member, { clientId, redirectUri, challenge: pkce().challenge, state: 'deny-state' }))
    const answer = await fx.member.post(`/api/oauth/requests/${requestId}`, { decision: 'deny' })
    expect(answer.status).toBe(200)
    const to = new URL(answer.body.redirect_to)
    expect(to.origin + to.pathname).toBe(redirectUri)
    expect(to.searchParams.get('error')).toBe('access_denied')
    expect(to.searchParams.get('state')).toBe('deny-state')
    // answered once
    expect((await fx.member.post(`/api/oauth/requests/${requestId}`, { decision: 'deny' })).status).toBe(404)
  })
})

describe('registration and redirect URIs', () => {
  it('registers public clients with https, loopback http or private-use redirect URIs, and refuses others', async () => {
    for (const uri of ['https://agent.example.com/cb', 'http://127.0.0.1:5000/cb', 'http://localhost/cb', 'cursor://anysphere.cursor-mcp/oauth/callback']) {
      await expect(registerClient(app, [uri])).resolves.toBeTruthy()
    }
    for (const uri of ['http://agent.example.com/cb', 'javascript:alert(1)', 'https://agent.example.com/cb#frag']) {
      const answer = await fetch(`${app.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Bad', redirect_uris: [uri], token_endpoint_auth_method: 'none' }) })
      expect(answer.status).toBe(400)
      expect((await answer.json()).error).toMatch(/invalid_client_metadata|invalid_redirect_uri/)
    }
    const { rows } = await app.db.query(`select count(*)::int as n from public.oauth_clients where client_name = 'Bad'`)
    expect(rows[0].n).toBe(0)
  })

  it('gives a confidential registration no secret: every client is public and proves itself with PKCE', async () => {
    const answer = await fetch(`${app.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Conf', redirect_uris: ['https://c.example.com/cb'], token_endpoint_auth_method: 'client_secret_post' }) })
    expect(answer.status).toBe(201)
    const body = await answer.json()
    expect(body.client_secret).toBeUndefined()
    expect(body.token_endpoint_auth_method).toBe('none')
  })
})

describe('attacks', () => {
  const redirectUri = 'http://127.0.0.1:9/callback'

  it('refuses a wrong PKCE verifier, a code used twice (revoking what it made), and another redirect URI', async () => {
    const clientId = await registerClient(app, [redirectUri, 'http://127.0.0.1:9/other'])
    const { verifier, challenge } = pkce()
    const code = await approve(fx.owner, { clientId, redirectUri, challenge }, fx.teamId, { tasks: 'read' })
    const exchange = (form: Record<string, string>) => tokenRequest(app, { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier, resource: `${app.url}/mcp`, ...form })

    const wrongVerifier = await exchange({ code_verifier: pkce().verifier })
    expect(wrongVerifier).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const otherRedirect = await exchange({ redirect_uri: 'http://127.0.0.1:9/other' })
    expect(otherRedirect).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    const otherResource = await exchange({ resource: 'https://evil.example.com/mcp' })
    expect(otherResource).toMatchObject({ status: 400, body: { error: 'invalid_target' } })
    // the resource of the authorization request must be named again
    const { resource: _resource, ...withoutResource } = { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier, resource: '' }
    expect(await tokenRequest(app, withoutResource)).toMatchObject({ status: 400, body: { error: 'invalid_target' } })

    const good = await exchange({})
    expect(good.status).toBe(200)
    expect((await mcpPost(good.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200)
    const again = await exchange({})
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    // the reuse revoked the grant the code made
    expect((await mcpPost(good.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(401)
  })

  it('refuses an expired code (60 s)', async () => {
    const clientId = await registerClient(app, [redirectUri])
    const { verifier, challenge } = pkce()
    const code = await approve(fx.owner, { clientId, redirectUri, challenge }, fx.teamId, { tasks: 'read' })
    await app.db.query(`update public.oauth_codes set expires_at = now() - interval '1 second' where client_id = $1`, [clientId])
    const answer = await tokenRequest(app, { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: redirectUri, code_verifier: verifier })
    expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
  })

  it('refuses another resource at the authorization endpoint (back to the app with invalid_target)', async () => {
    const clientId = await registerClient(app, [redirectUri])
    const location = await startAuthorization(fx.owner, { clientId, redirectUri, challenge: pkce().challenge, resource: 'https://evil.example.com/mcp' })
    const to = new URL(location)
    expect(to.origin + to.pathname).toBe(redirectUri)
    expect(to.searchParams.get('error')).toBe('invalid_target')
  })

  it('rotates refresh tokens; a refresh token used twice revokes the grant', async () => {
    const { clientId, tokens } = await connectApp(fx.owner, fx.teamId, { tasks: 'read' })
    const refresh = (token: string) => tokenRequest(app, { grant_type: 'refresh_token', refresh_token: token, client_id: clientId })
    const rotated = await refresh(tokens.refresh_token!)
    expect(rotated.status).toBe(200)
    expect(rotated.body.refresh_token).not.toBe(tokens.refresh_token)
    expect((await mcpPost(rotated.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200)
    // the old one again: refused, and the whole connection is revoked
    expect(await refresh(tokens.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    expect((await mcpPost(rotated.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(401)
    expect(await refresh(rotated.body.refresh_token)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
  })

  it('keeps a team A token inside team A', async () => {
    const { tokens } = await connectApp(fx.owner, fx.teamId, { tasks: 'write' })
    const client = await mcpClient(tokens.access_token)
    const read = await client.callTool({ name: 'query_database', arguments: { sql: `select title, team_id from tasks` } })
    expect(JSON.stringify(read.structuredContent)).not.toContain('OTHER-TEAM-SECRET')
    const { rows: [secret] } = await app.db.query(`select id from public.tasks where title = 'OTHER-TEAM-SECRET'`)
    const change = await client.callTool({ name: 'update_tasks', arguments: { id: secret.id, title: 'pwned' } })
    expect(change.isError).toBe(true)
    const { rows } = await app.db.query('select title from public.tasks where id = $1', [secret.id])
    expect(rows[0].title).toBe('OTHER-TEAM-SECRET')
  })

  it('refuses a member granting a team the user is not in (a member may grant write: tests/integration/oauth-member-agent.test.ts)', async () => {
    const clientId = await registerClient(app, [redirectUri])
    const before = (await app.db.query('select count(*)::int as n from public.oauth_codes')).rows[0].n
    const requestId = requestIdOf(await startAuthorization(fx.member, { clientId, redirectUri, challenge: pkce().challenge }))
    const otherTeam = await fx.member.post(`/api/oauth/requests/${requestId}`, { decision: 'approve', team_id: otherTeamId, access: { tasks: 'read' } })
    expect(otherTeam.status).toBe(404)
    expect((await app.db.query('select count(*)::int as n from public.oauth_codes')).rows[0].n).toBe(before)
  })

  it('offers read only when the app asked for mcp:read alone', async () => {
    const clientId = await registerClient(app, [redirectUri])
    const requestId = requestIdOf(await startAuthorization(fx.owner, { clientId, redirectUri, challenge: pkce().challenge, scope: 'mcp:read' }))
    const page = await fx.owner.get(`/api/oauth/requests/${requestId}`)
    expect(page.body.may_write).toBe(false)
    expect(page.body.teams[0].tables.every((t: { most: string }) => t.most === 'read')).toBe(true)
    const write = await fx.owner.post(`/api/oauth/requests/${requestId}`, { decision: 'approve', team_id: fx.teamId, access: { tasks: 'write' } })
    expect(write.status).toBe(400)
  })

  it('refuses an access token on the public API', async () => {
    const { tokens } = await connectApp(fx.owner, fx.teamId, { tasks: 'read' })
    const answer = await fetch(`${app.url}/api/v1/tasks`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(answer.status).toBe(401)
  })

  it('shows a bad redirect_uri or client_id on the consent page and never redirects to it', async () => {
    const clientId = await registerClient(app, [redirectUri])
    for (const params of [
      { clientId, redirectUri: 'https://evil.example.com/steal', challenge: pkce().challenge },
      { clientId: 'no-such-client', redirectUri: 'https://evil.example.com/steal', challenge: pkce().challenge },
      // a Client ID Metadata Document on a private address is never fetched
      { clientId: 'https://127.0.0.1/client.json', redirectUri: 'https://evil.example.com/steal', challenge: pkce().challenge },
      { clientId: 'https://169.254.169.254/latest/meta-data.json', redirectUri: 'https://evil.example.com/steal', challenge: pkce().challenge },
    ]) {
      const answer = await fetch(authorizeUrl(app, params), { redirect: 'manual' })
      expect(answer.status).toBe(302)
      const location = answer.headers.get('location')!
      expect(location).toMatch(/^\/oauth\/consent\?error=/)
      expect(location).not.toMatch(/^https?:/)
      const shown = await fetch(`${app.url}${location}`)
      expect(shown.status).toBe(200)
      expect(await shown.text()).toContain('This connection cannot be made')
    }
    // the same request sent as a form
    const posted = await fetch(`${app.url}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URL(authorizeUrl(app, { clientId, redirectUri: 'https://evil.example.com/steal', challenge: pkce().challenge })).searchParams,
    })
    expect(posted.status).toBe(302)
    expect(posted.headers.get('location')).toMatch(/^\/oauth\/consent\?error=/)
    const { rows } = await app.db.query(`select count(*)::int as n from public.oauth_clients where client_id like 'https://%'`)
    expect(rows[0].n).toBe(0)
  })
})

describe('grants', () => {
  it('lists one\'s own to members and all to admins; revocation by its user, by an admin, and by RFC 7009', async () => {
    const mine = await connectApp(fx.member, fx.teamId, { tasks: 'read' })
    const ownerGrant = await connectApp(fx.owner, fx.teamId, { tasks: 'read' })
    const memberList = (await fx.member.get(`/api/teams/${fx.teamId}/grants`)).body as { id: string, user_id: string }[]
    expect(memberList.every(g => g.user_id === fx.member.user!.id)).toBe(true)
    const adminList = (await fx.admin.get(`/api/teams/${fx.teamId}/grants`)).body as { id: string, user_id: string }[]
    expect(adminList.some(g => g.user_id === fx.owner.user!.id)).toBe(true)
    const ownerGrantId = adminList.find(g => g.user_id === fx.owner.user!.id)!.id
    // a member may not revoke someone else's (not even see it)
    expect((await fx.member.delete(`/api/teams/${fx.teamId}/grants/${ownerGrantId}`)).status).toBe(404)
    // the user revokes their own
    const memberGrantId = memberList[0]!.id
    expect((await fx.member.delete(`/api/teams/${fx.teamId}/grants/${memberGrantId}`)).status).toBe(200)
    expect((await fx.member.delete(`/api/teams/${fx.teamId}/grants/${memberGrantId}`)).status).toBe(409)
    expect((await mcpPost(mine.tokens.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(401)
    // RFC 7009 at the revocation endpoint
    const third = await connectApp(fx.owner, fx.teamId, { tasks: 'read' })
    const revoke = await fetch(`${app.url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: third.tokens.refresh_token!, client_id: third.clientId }) })
    expect(revoke.status).toBe(200)
    expect((await mcpPost(third.tokens.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(401)
    // an admin revokes the owner's; the outsider's team cannot reach it
    expect((await fx.outsider.delete(`/api/teams/${otherTeamId}/grants/${ownerGrantId}`)).status).toBe(404)
    expect((await fx.admin.delete(`/api/teams/${fx.teamId}/grants/${ownerGrantId}`)).status).toBe(200)
    expect((await mcpPost(ownerGrant.tokens.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(401)
  })

  it('follows the user\'s role: a lower role loses the write tools it may not use, removal from the team loses the token', async () => {
    const user: Client = await signUp(app, { name: 'Role Changer' })
    await app.db.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'admin')`, [fx.teamId, user.user!.id])
    const { tokens } = await connectApp(user, fx.teamId, { tasks: 'write' })
    expect(await toolNames(tokens.access_token)).toContain('delete_tasks')
    // a member may create and update tasks but not delete them
    await app.db.query(`update public.team_members set role = 'member' where team_id = $1 and user_id = $2`, [fx.teamId, user.user!.id])
    await waitFor('the lower role to take the delete tool away', async () => !(await toolNames(tokens.access_token)).includes('delete_tasks'))
    expect([...await toolNames(tokens.access_token)].sort()).toEqual(['create_tasks', 'query_database', 'update_tasks'])
    await app.db.query('delete from public.team_members where team_id = $1 and user_id = $2', [fx.teamId, user.user!.id])
    await waitFor('removal to refuse the token', async () => (await mcpPost(tokens.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status === 401)
  })

  it('keeps API keys working on /mcp as before', async () => {
    const key = (await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Agent key', scopes: { tasks: 'read' } })).body.key
    expect(await toolNames(key)).toEqual(['query_database'])
  })
})
