import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, teamWithRoles, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'

// A request of a known credential is in its team's API log whatever refused it, the early
// refusals too: a body too large (413), a body that is not JSON (415), a method the path does not
// take (405), a URL too long (414) and headers too large (431, which Node answers before the app
// sees the request: the app reads the credential from the packet Node hands it). And a request
// whose two credential headers name different keys is refused, not served as one of them.
let app: TestApp
let fx: TeamFixture
let key: { id: string, key: string }
let otherKey: { id: string, key: string }

beforeAll(async () => {
  app = await startApp({ API_LOG_FLUSH_MS: '100' })
  fx = await teamWithRoles(app)
  const created = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Refused' })
  key = { id: created.body.id, key: created.body.key }
  const outsiderTeam = (await fx.outsider.get('/api/auth/me')).body.teams.find((t: { name: string }) => t.name === 'Other Team').id
  const other = await fx.outsider.post(`/api/teams/${outsiderTeam}/api-keys`, { name: 'Other team key' })
  otherKey = { id: other.body.id, key: other.body.key }
})
afterAll(() => app?.stop())

/** The team's entry of a request id, once written. */
function entryOf(requestId: string | null) {
  expect(requestId).toMatch(/^req_/)
  return waitFor(`the API log entry ${requestId}`, async () => {
    const answer = await fx.owner.get(`/api/teams/${fx.teamId}/api-log/${requestId}`)
    return answer.status === 200 ? answer.body : undefined
  })
}

/** A raw request: the headers in the order given (so a credential can come before a large header). */
function rawRequest(path: string, headers: [string, string][], method = 'GET') {
  return new Promise<{ status: number, headers: Record<string, string | string[] | undefined>, body: string }>((resolve, reject) => {
    const request = httpRequest(`${app.url}${path}`, { method, headers: headers.flat() as unknown as Record<string, string> }, (response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => body += chunk)
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }))
    })
    request.on('error', reject)
    request.end()
  })
}

describe('early refusals of a known key are in the API log', () => {
  it('413: a 2 MiB body with a valid key (as Bearer, and as apikey on /rest/v1)', async () => {
    const big = JSON.stringify({ title: 'x'.repeat(2 * 1024 * 1024) })
    for (const [path, headers] of [['/api/v1/tasks', { authorization: `Bearer ${key.key}` }], ['/rest/v1/tasks', { apikey: key.key }], ['/mcp', { authorization: `Bearer ${key.key}` }]] as const) {
      const response = await fetch(`${app.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: big })
      expect(response.status, path).toBe(413)
      const entry = await entryOf(response.headers.get('request-id'))
      expect(entry).toMatchObject({ api_key_id: key.id, status: 413, method: 'POST', path, error_code: 'payload_too_large' })
    }
  })

  it('415: a body that is not JSON', async () => {
    const response = await fetch(`${app.url}/api/v1/tasks`, { method: 'POST', headers: { 'authorization': `Bearer ${key.key}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'title=x' })
    expect(response.status).toBe(415)
    const entry = await entryOf(response.headers.get('request-id'))
    expect(entry).toMatchObject({ api_key_id: key.id, status: 415, path: '/api/v1/tasks', error_code: (await response.json()).code })
  })

  it('405: a method the path does not take', async () => {
    const response = await fetch(`${app.url}/api/v1/tasks`, { method: 'PUT', headers: { authorization: `Bearer ${key.key}` } })
    expect(response.status).toBe(405)
    const entry = await entryOf(response.headers.get('request-id'))
    expect(entry).toMatchObject({ api_key_id: key.id, status: 405, method: 'PUT', path: '/api/v1/tasks', error_code: 'method_not_allowed' })
  })

  it('414: a URL longer than the server takes', async () => {
    const values = Array.from({ length: 20_000 }, (_, i) => i % 5 + 1).join(',')
    const answer = await rawRequest(`/api/v1/tasks?priority=in.(${values})`, [['authorization', `Bearer ${key.key}`]])
    expect(answer.status).toBe(414)
    const entry = await entryOf(answer.headers['request-id'] as string)
    expect(entry).toMatchObject({ api_key_id: key.id, status: 414, method: 'GET', path: '/api/v1/tasks', error_code: 'uri_too_long' })
    expect(entry.query.length).toBeLessThanOrEqual(1024)
  })

  it('431: headers larger than the server takes, the key sent before them', async () => {
    const answer = await rawRequest('/api/v1/tasks', [['authorization', `Bearer ${key.key}`], ['x-padding', 'p'.repeat(20_000)]])
    expect(answer.status).toBe(431)
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'headers_too_large' })
    const entry = await entryOf(answer.headers['request-id'] as string)
    expect(entry).toMatchObject({ api_key_id: key.id, status: 431, method: 'GET', path: '/api/v1/tasks', error_code: 'headers_too_large' })
  })

  it('an unknown key\'s refusals stay out of every team\'s log', async () => {
    const response = await fetch(`${app.url}/api/v1/tasks`, { method: 'PUT', headers: { authorization: 'Bearer not-a-key' } })
    expect(response.status).toBe(405)
    const known = await fetch(`${app.url}/api/v1/tasks`, { method: 'PUT', headers: { authorization: `Bearer ${key.key}` } })
    await entryOf(known.headers.get('request-id'))
    const { rows } = await app.db.query('select count(*)::int as n from public.api_log_entries where id = $1', [response.headers.get('request-id')])
    expect(rows[0].n).toBe(0)
  })
})

describe('two credentials that disagree', () => {
  it('are refused 401 naming both headers, and nothing is served or written', async () => {
    const before = await app.db.query('select count(*)::int as n from public.tasks')
    for (const [authorization, apikey] of [[key.key, otherKey.key], [otherKey.key, key.key]]) {
      const read = await new KeyClient(app, authorization!).get('/api/v1/tasks', { apikey: apikey! })
      expect(read.status).toBe(401)
      expect(read.body).toMatchObject({ code: 'conflicting_credentials', message: expect.stringMatching(/Authorization.*apikey/) })
      const write = await new KeyClient(app, authorization!).post('/rest/v1/tasks', { title: 'Whose?' }, { apikey: apikey! })
      expect(write.status).toBe(401)
      const mcp = await new KeyClient(app, authorization!).request('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { apikey: apikey!, accept: 'application/json, text/event-stream' })
      expect(mcp.status).toBe(401)
    }
    expect((await app.db.query('select count(*)::int as n from public.tasks')).rows).toEqual(before.rows)
  })

  it('the same key in both headers is served (supabase-js sends both)', async () => {
    const answer = await new KeyClient(app, key.key).get('/rest/v1/tasks', { apikey: key.key })
    expect(answer.status).toBe(200)
    const alone = await new KeyClient(app, key.key).get('/api/v1/tasks')
    expect(alone.status).toBe(200)
  })
})
