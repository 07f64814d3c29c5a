import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, teamWithRoles, type TeamFixture } from '../support/http'

// /api/v1/webhook-endpoints: an automation tool subscribes and unsubscribes with a team key that
// holds the `webhooks` scope. The app runs with the SSRF guard on (no private addresses).
let app: TestApp
let fx: TeamFixture
let other: TeamFixture

beforeAll(async () => {
  app = await startApp()
  fx = await teamWithRoles(app)
  other = await teamWithRoles(app)
})
afterAll(() => app?.stop())

async function keyFor(team: TeamFixture, name: string, scopes: Record<string, string>): Promise<KeyClient> {
  const answer = await team.owner.post(`/api/teams/${team.teamId}/api-keys`, { name, scopes })
  expect(answer.status).toBe(201)
  return new KeyClient(app, answer.body.key)
}

const hookUrl = 'https://hooks.example.com/catch/1'

describe('the webhooks scope', () => {
  it('is needed: a key for every table (even read-write) gets 403 naming it, and nothing is made', async () => {
    const tablesOnly = await keyFor(fx, 'Tables', { '*': 'write' })
    for (const answer of [await tablesOnly.get('/api/v1/webhook-endpoints'), await tablesOnly.post('/api/v1/webhook-endpoints', { url: hookUrl, events: ['*'] })]) {
      expect(answer.status).toBe(403)
      expect(answer.body.error).toMatch(/webhook endpoints.*"webhooks"/)
    }
    const reader = await keyFor(fx, 'Hook reader', { webhooks: 'read' })
    expect((await reader.get('/api/v1/webhook-endpoints')).status).toBe(200)
    expect((await reader.post('/api/v1/webhook-endpoints', { url: hookUrl, events: ['*'] })).status).toBe(403)
    const { rows } = await app.db.query('select count(*)::int as n from public.webhook_endpoints where team_id = $1', [fx.teamId])
    expect(rows[0].n).toBe(0)
  })

  it('answers 401 with WWW-Authenticate without a key', async () => {
    const answer = await fx.anonymous.get('/api/v1/webhook-endpoints')
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('is offered when a key is created, and an unknown scope name is still a 400', async () => {
    const answer = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Zapier', scopes: { 'webhooks': 'write', '*': 'read' } })
    expect(answer.status).toBe(201)
    expect(answer.body.scopes).toEqual({ 'webhooks': 'write', '*': 'read' })
    const bad = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Bad', scopes: { webhook: 'write' } })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatch(/^scopes\.webhook:/)
  })
})

describe('subscribing and unsubscribing', () => {
  it('creates an endpoint with the signing secret once, lists it, changes and deletes it; Settings shows the key that made it', async () => {
    const zap = await keyFor(fx, 'Zapier', { webhooks: 'write' })
    const created = await zap.post('/api/v1/webhook-endpoints', { url: hookUrl, events: ['tasks.created'], description: 'New tasks to Zapier' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ url: hookUrl, events: ['tasks.created'], enabled: true, created_by_api_key_name: 'Zapier' })
    const secret = (await fx.owner.get(`/api/teams/${fx.teamId}/webhooks/secret`)).body.secret
    expect(created.body.secret).toBe(secret)
    const id = created.body.id

    const listed = await zap.get('/api/v1/webhook-endpoints')
    expect(listed.body.map((e: { id: string }) => e.id)).toEqual([id])
    expect(listed.body[0]).not.toHaveProperty('secret')
    const one = await zap.get(`/api/v1/webhook-endpoints/${id}`)
    expect(one.body).toMatchObject({ id, url: hookUrl })
    expect(one.body).not.toHaveProperty('secret')

    const settings = await fx.owner.get(`/api/teams/${fx.teamId}/webhooks/endpoints`)
    expect(settings.body.find((e: { id: string }) => e.id === id)).toMatchObject({ created_by_api_key_name: 'Zapier', created_by_api_key_id: expect.any(String) })

    const changed = await zap.patch(`/api/v1/webhook-endpoints/${id}`, { events: ['tasks.created', 'tasks.updated'], enabled: false })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ events: ['tasks.created', 'tasks.updated'], enabled: false, disabled_reason: 'Disabled by the API key "Zapier"' })

    expect((await zap.delete(`/api/v1/webhook-endpoints/${id}`)).status).toBe(204)
    expect((await zap.get(`/api/v1/webhook-endpoints/${id}`)).status).toBe(404)
    expect((await zap.get('/api/v1/webhook-endpoints')).body).toEqual([])
  })

  it('refuses what the session routes refuse: private addresses, unknown events, bad bodies; nothing is made', async () => {
    const zap = await keyFor(fx, 'Careless', { webhooks: 'write' })
    const refusals: [unknown, RegExp][] = [
      [{ url: 'http://127.0.0.1:8080/hook', events: ['*'] }, /^url:/],
      [{ url: 'http://169.254.169.254/latest/meta-data', events: ['*'] }, /^url:/],
      [{ url: 'http://localhost/hook', events: ['*'] }, /^url:/],
      [{ url: 'ftp://example.com/hook', events: ['*'] }, /^url:/],
      [{ url: hookUrl, events: ['tasks.exploded'] }, /^events: unknown event type "tasks\.exploded"/],
      [{ url: hookUrl, events: [] }, /^events:/],
      [{ events: ['*'] }, /^url:/],
    ]
    for (const [body, message] of refusals) {
      const answer = await zap.post('/api/v1/webhook-endpoints', body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(answer.body.error).toMatch(message)
      expect(answer.body).not.toHaveProperty('secret')
    }
    const { rows } = await app.db.query('select count(*)::int as n from public.webhook_endpoints where team_id = $1', [fx.teamId])
    expect(rows[0].n).toBe(0)
  })

  it('keeps teams apart: another team\'s endpoint is a 404 for every route, and unchanged', async () => {
    const theirs = (await other.owner.post(`/api/teams/${other.teamId}/webhooks/endpoints`, { url: hookUrl, events: ['*'] })).body
    const zap = await keyFor(fx, 'Nosy', { webhooks: 'write' })
    expect((await zap.get(`/api/v1/webhook-endpoints/${theirs.id}`)).status).toBe(404)
    expect((await zap.patch(`/api/v1/webhook-endpoints/${theirs.id}`, { url: 'https://evil.example.com/' })).status).toBe(404)
    expect((await zap.delete(`/api/v1/webhook-endpoints/${theirs.id}`)).status).toBe(404)
    expect((await zap.get('/api/v1/webhook-endpoints')).body).toEqual([])
    const { rows } = await app.db.query('select url from public.webhook_endpoints where id = $1', [theirs.id])
    expect(rows).toEqual([{ url: hookUrl }])
  })

  it('is documented in OpenAPI, for a key that holds the scope', async () => {
    const zap = await keyFor(fx, 'Documented', { webhooks: 'read' })
    const paths = (await zap.get('/api/v1/openapi.json')).body.paths
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/api/v1/webhook-endpoints', '/api/v1/webhook-endpoints/{id}']))
    expect(Object.keys(paths['/api/v1/webhook-endpoints'])).toEqual(['get'])
    const all = (await fx.anonymous.get('/api/v1/openapi.json')).body.paths
    expect(Object.keys(all['/api/v1/webhook-endpoints']).sort()).toEqual(['get', 'post'])
    expect(Object.keys(all['/api/v1/webhook-endpoints/{id}']).sort()).toEqual(['delete', 'get', 'patch'])
  })
})
