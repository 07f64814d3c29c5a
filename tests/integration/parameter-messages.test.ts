import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, keyClientFor, teamWithRoles, type TeamFixture } from '../support/http'

// The public API answers one code per problem, and messages in words that name the parameter:
// never a validator's own text.
let app: TestApp
let fx: TeamFixture
let api: KeyClient

beforeAll(async () => {
  app = await startApp()
  fx = await teamWithRoles(app)
  api = await keyClientFor(app, fx, 'Messages')
})
afterAll(() => app?.stop())

/** What a validator says on its own (zod's default messages). */
const validatorText = /Too (small|big)|expected (number|string|array|object|boolean)|Invalid (input|option|string|uuid|url)|received|>=|<=|nonoptional/i

describe('a malformed id and an unknown id', () => {
  it('answer the same status, code and message on every route that takes an id', async () => {
    const hooks = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Hooks', scopes: { webhooks: 'write' } })
    const webhook = new KeyClient(app, hooks.body.key)
    for (const [method, path, body] of [
      ['GET', '/api/v1/tasks/%s', undefined],
      ['PATCH', '/api/v1/tasks/%s', { title: 'x' }],
      ['DELETE', '/api/v1/tasks/%s', undefined],
      ['GET', '/api/v1/webhook-endpoints/%s', undefined],
      ['PATCH', '/api/v1/webhook-endpoints/%s', { enabled: false }],
      ['DELETE', '/api/v1/webhook-endpoints/%s', undefined],
    ] as const) {
      const client = path.includes('webhook') ? webhook : api
      const malformed = await client.request(method, path.replace('%s', 'not-an-id'), body)
      const unknown = await client.request(method, path.replace('%s', randomUUID()), body)
      expect(unknown.status, `${method} ${path}`).toBe(404)
      expect({ status: malformed.status, code: malformed.body.code, message: malformed.body.message }, `${method} ${path}`)
        .toEqual({ status: unknown.status, code: unknown.body.code, message: unknown.body.message })
    }
  })
})

describe('parameters out of range', () => {
  it('name the parameter and its range in words', async () => {
    for (const limit of ['0', '101', 'ten', '1.5']) {
      const answer = await api.get(`/api/v1/events?limit=${limit}`)
      expect(answer.status, limit).toBe(400)
      expect(answer.body.message, limit).toBe('limit: must be an integer from 1 to 100')
    }
  })

  it('no public API parameter or body answers a validator\'s text', async () => {
    const sweep = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Sweep', scopes: { webhooks: 'write' } })
    const hooks = new KeyClient(app, sweep.body.key)
    const answers = [
      await api.get('/api/v1/events?after=zz'),
      await api.get(`/api/v1/events?types=${'x'.repeat(3000)}`),
      await api.get(`/api/v1/events?after=${'1'.repeat(100)}`),
      await api.get('/api/v1/events/stream?limit=0'),
      await hooks.post('/api/v1/webhook-endpoints', {}),
      await hooks.post('/api/v1/webhook-endpoints', { url: 5, events: 'x' }),
      await hooks.post('/api/v1/webhook-endpoints', { url: 'https://example.com/hook', events: [] }),
      await hooks.post('/api/v1/webhook-endpoints', { url: 'https://example.com/hook', events: ['*'], description: 'd'.repeat(5000) }),
      await hooks.post('/api/v1/webhook-endpoints', { url: 'https://example.com/hook', events: ['*'], enabled: 'yes' }),
      await hooks.patch(`/api/v1/webhook-endpoints/${randomUUID()}`, { events: 7 }),
      await api.get('/api/v1/tasks?limit=-1'),
      await api.get('/api/v1/tasks?offset=x'),
      await api.patch(`/api/v1/tasks/${randomUUID()}`, []),
    ]
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(400)
      expect(answer.body.message, JSON.stringify(answer.body)).not.toMatch(validatorText)
      expect(answer.body.message).toMatch(/^[\w.[\]]+: |^[A-Z]/)
    }
  })
})
