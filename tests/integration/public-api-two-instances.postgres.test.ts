import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, createTeam, signUp } from '../support/http'

// Two app processes on one Postgres database share each key's rate limit (a counter row, from which
// each process leases blocks of requests) and its idempotency keys (claimed rows).
const limit = 6
let first: TestApp
let second: TestApp
beforeAll(async () => {
  const env = { API_RATE_LIMIT: String(limit), API_RATE_WINDOW_SECONDS: '86400' }
  first = await startApp(env)
  second = await startApp(env, { databaseUrl: first.databaseUrl })
})
afterAll(async () => {
  await second?.stop()
  await first?.stop()
})

describe('the public API across two app processes', () => {
  it('count one key\'s requests together, whichever process serves them', async () => {
    const owner = await signUp(first)
    const teamId = await createTeam(owner, 'Shared Limit')
    const { key } = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Shared' })).body
    const clients = [new KeyClient(first, key), new KeyClient(second, key)]
    for (let i = 1; i <= limit; i++) {
      const answer = await clients[i % 2]!.get('/api/v1/tasks')
      expect(answer.status).toBe(200)
      // never more than is left; across processes it may say less (another's block counts as used)
      expect(Number(answer.headers.get('ratelimit-remaining'))).toBeLessThanOrEqual(limit - i)
    }
    expect((await clients[0]!.get('/api/v1/tasks')).status).toBe(429)
    expect((await clients[1]!.get('/api/v1/tasks')).status).toBe(429)
  })

  it('replay an idempotency key used on one process from the other', async () => {
    const owner = await signUp(first)
    const teamId = await createTeam(owner, 'Shared Keys')
    const { key } = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Retrying' })).body
    const headers = { 'idempotency-key': 'cross-process' }
    const created = await new KeyClient(first, key).post('/api/v1/tasks', { title: 'Across' }, headers)
    expect(created.status).toBe(201)
    const retried = await new KeyClient(second, key).post('/api/v1/tasks', { title: 'Across' }, headers)
    expect(retried.status).toBe(201)
    expect(retried.headers.get('idempotent-replayed')).toBe('true')
    expect(retried.body.id).toBe(created.body.id)
    const { rows } = await first.db.query('select count(*)::int as n from public.tasks where team_id = $1', [teamId])
    expect(rows[0].n).toBe(1)
  })
})
