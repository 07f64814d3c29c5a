import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, createTeam, signUp, type Client } from '../support/http'
import { waitFor } from '../support/wait'

// Three app processes on one Postgres database. Each keeps the keys it has verified in memory and
// counts requests from blocks it leases from the key's counter. A change of a key reaches the
// others by notification; a rate limit is shared through the counter.
const limit = 100
let a: TestApp
let b: TestApp
let c: TestApp
let owner: Client
let teamId: string
beforeAll(async () => {
  const env = { API_RATE_LIMIT: String(limit), API_RATE_WINDOW_SECONDS: '86400' }
  a = await startApp(env)
  b = await startApp(env, { databaseUrl: a.databaseUrl })
  c = await startApp(env, { databaseUrl: a.databaseUrl })
  owner = await signUp(a)
  teamId = await createTeam(owner, 'Cached Keys')
})
afterAll(async () => {
  await c?.stop()
  await b?.stop()
  await a?.stop()
})

const keysPath = () => `/api/teams/${teamId}/api-keys`

async function newKey(body: Record<string, unknown> = { name: 'Cached' }): Promise<{ id: string, key: string }> {
  const answer = await owner.post(keysPath(), body)
  expect(answer.status).toBe(201)
  return answer.body
}

/** Polls the app with the key until it answers 401; answers that answer and how long it took. */
async function refusedOn(app: TestApp, key: string, timeoutMs: number) {
  const started = Date.now()
  const answer = await waitFor(`a 401 from ${app.url}`, async () => {
    const got = await new KeyClient(app, key).get('/api/v1/tasks')
    return got.status === 401 && got
  }, { timeoutMs, intervalMs: 10 })
  return { answer, ms: Date.now() - started }
}

/** Every process has verified the key (and so holds it in memory). */
async function usedEverywhere(key: string) {
  for (const app of [a, b, c]) expect((await new KeyClient(app, key).get('/api/v1/tasks')).status).toBe(200)
}

describe('API keys verified from memory on several processes', () => {
  it('a key revoked through one process: that one refuses the very next request, the others within 1 s', async () => {
    const timings: number[] = []
    for (let i = 0; i < 3; i++) {
      const { id, key } = await newKey()
      await usedEverywhere(key)
      expect((await owner.patch(`${keysPath()}/${id}`)).status).toBe(200)
      const next = await new KeyClient(a, key).get('/api/v1/tasks')
      expect(next.status).toBe(401)
      expect(next.body.error).toBe('This API key has been revoked')
      for (const app of [b, c]) {
        const { answer, ms } = await refusedOn(app, key, 1_000)
        expect(answer.body.error).toBe('This API key has been revoked')
        timings.push(ms)
      }
    }
    console.info(`[key-cache] revocation seen by another process after ${timings.join(', ')} ms (polled every 10 ms)`)
  })

  it('a revocation made by plain SQL is seen by every process', async () => {
    const { id, key } = await newKey()
    await usedEverywhere(key)
    await a.db.query('update public.api_keys set revoked_at = now() where id = $1', [id])
    for (const app of [a, b, c]) expect((await refusedOn(app, key, 1_000)).answer.body.error).toBe('This API key has been revoked')
    // once refused, never served again by a process that refused it, even if the row says otherwise
    await a.db.query('update public.api_keys set revoked_at = null where id = $1', [id])
    for (const app of [a, b, c]) expect((await new KeyClient(app, key).get('/api/v1/tasks')).status).toBe(401)
  })

  it('with the notification connections cut, a revocation is still seen within 5 s, and after they are back within 1 s', async () => {
    const first = await newKey()
    await usedEverywhere(first.key)
    const { rows } = await a.db.query(`select pg_terminate_backend(pid) as ended from pg_stat_activity
      where application_name = 'tws-listen' and datname = current_database()`)
    expect(rows.length).toBe(3)
    // revoked while the processes are (re)connecting: their notification of it may be lost
    await a.db.query('update public.api_keys set revoked_at = now() where id = $1', [first.id])
    for (const app of [b, c]) expect((await refusedOn(app, first.key, 5_000)).answer.body.error).toBe('This API key has been revoked')
    // the processes listen again
    await waitFor('three listening connections', async () =>
      (await a.db.query(`select count(*)::int as n from pg_stat_activity where application_name = 'tws-listen' and datname = current_database()`)).rows[0].n === 3)
    const second = await newKey()
    await usedEverywhere(second.key)
    expect((await owner.patch(`${keysPath()}/${second.id}`)).status).toBe(200)
    for (const app of [b, c]) expect((await refusedOn(app, second.key, 1_000)).answer.body.error).toBe('This API key has been revoked')
  })

  it('a rolled key keeps working on every process during its overlap and is refused after it, to the second', async () => {
    const old = await newKey()
    await usedEverywhere(old.key)
    const rolled = await owner.post(`${keysPath()}/${old.id}/roll`, { expires_in_seconds: 2 })
    expect(rolled.status).toBe(201)
    const { rows } = await a.db.query(`select extract(epoch from expires_at)::float8 * 1000 as ends from public.api_keys where id = $1`, [old.id])
    const ends = rows[0].ends as number
    for (const app of [a, b, c]) {
      const answer = await new KeyClient(app, old.key).get('/api/v1/tasks')
      // still within the overlap when the request was answered
      if (Date.now() < ends) expect(answer.status).toBe(200)
      expect((await new KeyClient(app, rolled.body.key).get('/api/v1/tasks')).status).toBe(200)
    }
    await waitFor('the overlap to end', () => Date.now() > ends, { timeoutMs: 5_000 })
    for (const app of [a, b, c]) {
      const answer = await new KeyClient(app, old.key).get('/api/v1/tasks')
      expect(answer.status).toBe(401)
      expect(answer.body.error).toBe('This API key has expired')
      expect((await new KeyClient(app, rolled.body.key).get('/api/v1/tasks')).status).toBe(200)
    }
  })

  it('a key that expires is refused by every process from its expiry on, without a notification', async () => {
    const expiresAt = new Date(Date.now() + 3_000)
    const { key } = await newKey({ name: 'Short', expires_at: expiresAt.toISOString() })
    await usedEverywhere(key)
    await waitFor('the expiry', () => Date.now() > expiresAt.getTime(), { timeoutMs: 5_000 })
    for (const app of [a, b, c]) {
      const answer = await new KeyClient(app, key).get('/api/v1/tasks')
      expect(answer.status).toBe(401)
      expect(answer.body.error).toBe('This API key has expired')
    }
  })
})

describe('rate limits leased in blocks over two processes', () => {
  it(`120 concurrent requests of one key: between 90% and 100% of ${limit} served, the rest 429, RateLimit-Remaining never above what is left`, async () => {
    const { id, key } = await newKey()
    const clients = [new KeyClient(a, key), new KeyClient(b, key)]
    const burst = await Promise.all(Array.from({ length: 120 }, (_, i) => clients[i % 2]!.get('/api/v1/projects')))
    const served = burst.filter(answer => answer.status === 200)
    expect(burst.every(answer => answer.status === 200 || answer.status === 429)).toBe(true)
    expect(served.length).toBeGreaterThanOrEqual(0.9 * limit)
    expect(served.length).toBeLessThanOrEqual(limit)
    // then one request at a time, alternating, until both processes refuse: what blocks the
    // processes still hold is served, and never more than the limit in all
    const drained: { status: number, remaining: number }[] = []
    for (let refusals = 0, i = 0; refusals < 4 && i < 60; i++) {
      const answer = await clients[i % 2]!.get('/api/v1/projects')
      drained.push({ status: answer.status, remaining: Number(answer.headers.get('ratelimit-remaining')) })
      refusals = answer.status === 429 ? refusals + 1 : 0
    }
    const total = served.length + drained.filter(answer => answer.status === 200).length
    console.info(`[key-cache] 120 concurrent requests over two processes: ${served.length} served; ${total} with the blocks drained afterwards`)
    expect(total).toBeLessThanOrEqual(limit)
    for (const answer of burst) {
      const remaining = Number(answer.headers.get('ratelimit-remaining'))
      expect(remaining).toBeLessThanOrEqual(answer.status === 200 ? total - 1 : 0)
    }
    // each answer's Remaining is at most what was served after it
    drained.forEach((answer, i) => {
      const servedAfter = drained.slice(i + 1).filter(later => later.status === 200).length
      expect(answer.remaining, `answer ${i}`).toBeLessThanOrEqual(servedAfter)
    })
    // the counter took the limit and never more
    const { rows } = await a.db.query('select count from public.rate_limits where key = $1', [`key:${id}`])
    expect(rows[0].count).toBe(limit)
  })
})
