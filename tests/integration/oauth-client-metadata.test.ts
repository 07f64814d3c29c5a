import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { signUp, createTeam, type Client } from '../support/http'
import { authorizeUrl, pkce, requestIdOf, startAuthorization, tokenRequest } from '../support/oauth'

// Client ID Metadata Documents: a client_id that is an https URL names a JSON document the app
// fetches (through the webhook SSRF guard, at most 5 KiB, cached). Here the documents are served
// over https on this machine, so this app allows private networks and trusts the test's
// self-signed certificate; the refusal of private addresses is tried in oauth.test.ts.
let app: TestApp
let server: Server
let base: string
let user: Client
let teamId: string
let folder: string
const fetched: string[] = []
const documents = new Map<string, unknown>()
const redirectUri = 'http://127.0.0.1:9/callback'

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'cimd-'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-days', '1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(folder, 'key.pem'), '-out', join(folder, 'cert.pem')], { stdio: 'ignore' })
  server = createServer({ key: readFileSync(join(folder, 'key.pem')), cert: readFileSync(join(folder, 'cert.pem')) }, (request, response) => {
    fetched.push(request.url!)
    const document = documents.get(request.url!)
    if (document === undefined) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(typeof document === 'string' ? document : JSON.stringify(document))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `https://127.0.0.1:${(server.address() as { port: number }).port}`
  app = await startApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', NODE_EXTRA_CA_CERTS: join(folder, 'cert.pem') })
  user = await signUp(app, { name: 'Cimd User' })
  teamId = await createTeam(user, 'Cimd Team')
})
afterAll(async () => {
  await app?.stop()
  await new Promise(resolve => server?.close(resolve))
  if (folder) rmSync(folder, { recursive: true, force: true })
})

/** Where the authorization endpoint sends a browser for this client_id (no session needed to see it). */
async function authorizeLocation(clientId: string, redirect = redirectUri): Promise<string> {
  const answer = await fetch(authorizeUrl(app, { clientId, redirectUri: redirect, challenge: pkce().challenge }), { redirect: 'manual' })
  expect(answer.status).toBe(302)
  return answer.headers.get('location')!
}

describe('Client ID Metadata Documents', () => {
  it('fetches the document once (cached), shows its name on the consent page, and issues tokens to it', async () => {
    const clientId = `${base}/agent.json`
    documents.set('/agent.json', { client_id: clientId, client_name: 'Document Agent', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' })
    expect(await authorizeLocation(clientId)).toMatch(/^\/oauth\/consent\?request=/)
    const { verifier, challenge } = pkce()
    const requestId = requestIdOf(await startAuthorization(user, { clientId, redirectUri, challenge }))
    const consent = await user.get(`/api/oauth/requests/${requestId}`)
    expect(consent.body).toMatchObject({ client_name: 'Document Agent', client_id: clientId, redirect_host: '127.0.0.1:9' })
    const approved = await user.post(`/api/oauth/requests/${requestId}`, { decision: 'approve', team_id: teamId, access: { tasks: 'read' } })
    const code = new URL(approved.body.redirect_to).searchParams.get('code')!
    const tokens = await tokenRequest(app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId, resource: `${app.url}/mcp` })
    expect(tokens.status).toBe(200)
    expect(fetched.filter(path => path === '/agent.json')).toHaveLength(1)
  })

  it('refuses a document that names another client, omits the redirect URI, is too large, is not JSON or is missing', async () => {
    documents.set('/other.json', { client_id: `${base}/someone-else.json`, client_name: 'Impostor', redirect_uris: [redirectUri] })
    documents.set('/no-redirect.json', { client_id: `${base}/no-redirect.json`, client_name: 'Elsewhere', redirect_uris: ['https://elsewhere.example.com/cb'] })
    documents.set('/large.json', JSON.stringify({ client_id: `${base}/large.json`, client_name: 'Large', redirect_uris: [redirectUri], padding: 'x'.repeat(6000) }))
    documents.set('/not-json.json', '<html>hello</html>')
    const cases: [string, RegExp][] = [
      ['/other.json', /another client_id/],
      ['/no-redirect.json', /did not register/],
      ['/large.json', /larger than 5 KiB/],
      ['/not-json.json', /not JSON/],
      ['/missing.json', /answered 404/],
    ]
    for (const [path, message] of cases) {
      const location = await authorizeLocation(`${base}${path}`)
      expect(location, path).toMatch(/^\/oauth\/consent\?error=/)
      expect(new URL(location, app.url).searchParams.get('error'), path).toMatch(message)
    }
    // only valid documents are kept (one whose redirect URIs do not include the request's is valid)
    const { rows } = await app.db.query(`select client_id from public.oauth_clients where kind = 'metadata_document' order by client_id`)
    expect(rows.map(row => row.client_id)).toEqual([`${base}/agent.json`, `${base}/no-redirect.json`])
  })
})
