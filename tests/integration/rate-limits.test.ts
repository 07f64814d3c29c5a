import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, KeyClient, teamWithRoles, type TeamFixture } from '../support/http'

// The public API's rate limit: 5 requests per day-long window here, so that a window never ends
// during a test; the end of a window is reached by moving the counter's window back in the database.
const limit = 5
let app: TestApp
let fixture: TeamFixture
beforeAll(async () => {
  app = await startApp({ API_RATE_LIMIT: String(limit), API_RATE_WINDOW_SECONDS: '86400' })
  fixture = await teamWithRoles(app)
})
afterAll(() => app?.stop())

async function newKey(): Promise<KeyClient & { id: string }> {
  const answer = await fixture.owner.post(`/api/teams/${fixture.teamId}/api-keys`, { name: 'Limited' })
  expect(answer.status).toBe(201)
  return Object.assign(new KeyClient(app, answer.body.key), { id: answer.body.id as string })
}

describe('rate limits of the public API', () => {
  it('every answer carries the limit, what remains and when the window resets; over the limit is a 429 that writes nothing', async () => {
    const key = await newKey()
    for (let i = 1; i <= limit; i++) {
      const answer = i === limit ? await key.post('/api/v1/tasks', { title: `Within ${i}` }) : await key.get('/api/v1/tasks')
      expect(answer.status).toBe(i === limit ? 201 : 200)
      expect(answer.headers.get('ratelimit-limit')).toBe(String(limit))
      expect(answer.headers.get('ratelimit-remaining')).toBe(String(limit - i))
      const reset = Number(answer.headers.get('ratelimit-reset'))
      expect(reset).toBeGreaterThan(0)
      expect(reset).toBeLessThanOrEqual(86400)
    }
    const refused = await key.post('/api/v1/tasks', { title: 'Over the limit' })
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatch(/^Rate limit exceeded: 5 requests per 86400 seconds for this API key; retry in \d+ seconds$/)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    const { rows } = await app.db.query('select count(*)::int as n from public.tasks where title = $1', ['Over the limit'])
    expect(rows[0].n).toBe(0)
    // also errors of the route count and are limited: a 404 becomes a 429 over the limit
    expect((await key.get('/api/v1/nope')).status).toBe(429)
  })

  it('each key has its own counter, and a new window starts over', async () => {
    const first = await newKey()
    const second = await newKey()
    for (let i = 0; i < limit; i++) expect((await first.get('/api/v1/notes')).status).toBe(200)
    expect((await first.get('/api/v1/notes')).status).toBe(429)
    expect((await second.get('/api/v1/notes')).headers.get('ratelimit-remaining')).toBe(String(limit - 1))
    // the window ends: its start moves back by a whole window
    await app.db.query(`update public.rate_limits set window_started_at = window_started_at - interval '1 day' where key = $1`, [`key:${first.id}`])
    const again = await first.get('/api/v1/notes')
    expect(again.status).toBe(200)
    expect(again.headers.get('ratelimit-remaining')).toBe(String(limit - 1))
  })

  it('20 concurrent requests of one key: exactly the limit is served', async () => {
    const key = await newKey()
    const answers = await Promise.all(Array.from({ length: 20 }, () => key.get('/api/v1/projects')))
    expect(answers.filter(answer => answer.status === 200)).toHaveLength(limit)
    expect(answers.filter(answer => answer.status === 429)).toHaveLength(20 - limit)
  })

  it('requests without a valid key count against the address: after the limit, 429 instead of 401', async () => {
    await app.db.query(`delete from public.rate_limits where key like 'ip:%'`)
    const unknown = new KeyClient(app, 'not-a-real-key')
    for (let i = 1; i <= limit; i++) {
      const answer = i % 2 ? await unknown.get('/api/v1/tasks') : await new Client(app).get('/api/v1/tasks')
      expect(answer.status).toBe(401)
      expect(answer.headers.get('ratelimit-remaining')).toBe(String(limit - i))
    }
    const refused = await unknown.get('/api/v1/tasks')
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatch(/for this address/)
    // a valid key is counted on its own, not against the address
    const key = await newKey()
    expect((await key.get('/api/v1/tasks')).status).toBe(200)
  })
})
