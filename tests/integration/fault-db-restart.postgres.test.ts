import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, createTeam, signUp, type Answer } from '../support/http'
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres'

// Postgres stops (immediate mode, as a crash) in the middle of traffic and comes back: the app
// answers 503 `{ error }` meanwhile, never a 500, does not exit, and recovers without a restart.
// The server is a private cluster of this test's own: the machine's server is shared.
let server: PrivatePostgres
let app: TestApp
beforeAll(async () => {
  server = await startPrivatePostgres()
  app = await startApp({}, { databaseUrl: server.url })
})
afterAll(async () => {
  await app?.stop()
  await server?.destroy()
})

interface Observed {
  path: string
  startedAt: number
  endedAt: number
  answer: Answer
}

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(r => setTimeout(r, 50))
  }
}

describe('Postgres restarted during traffic', () => {
  it('answers 503 { error } while the database is down, never crashes, and recovers by itself', async () => {
    const owner = await signUp(app, { name: 'Rita Restart' })
    const teamId = await createTeam(owner, 'Restart Team')
    const key = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'traffic' })).body.key as string
    const api = new Client(app)
    const auth = { authorization: `Bearer ${key}` }
    const requests: [string, () => Promise<Answer>][] = [
      ['GET /api/v1/notes', () => api.get('/api/v1/notes', auth)],
      ['POST /api/v1/notes', () => api.post('/api/v1/notes', { title: 'traffic' }, auth)],
      ['GET /api/teams/:id', () => owner.get(`/api/teams/${teamId}`)],
      ['GET /api/teams/:id/activity', () => owner.get(`/api/teams/${teamId}/activity`)],
      ['GET /api/health', () => api.get('/api/health')],
    ]
    const observed: Observed[] = []
    let isRunning = true
    const loop = async (offset: number) => {
      for (let i = offset; isRunning; i++) {
        const [path, send] = requests[i % requests.length]!
        const startedAt = Date.now()
        const answer = await send()
        observed.push({ path, startedAt, endedAt: Date.now(), answer })
      }
    }
    const loops = [0, 1, 2].map(loop)
    const countAfter = (time: number) => observed.filter(o => o.startedAt > time).length

    await until('traffic to flow', () => observed.length >= 15)
    await server.crash()
    const downAt = Date.now()
    await until('20 requests while the database is down', () => countAfter(downAt) >= 20)
    const page = await owner.get('/app')
    // (the server may accept connections before pg_ctl notices it is ready: "down" ends when it is started)
    const upAt = Date.now()
    await server.start()
    // no restart of the app: its pool reconnects on the next requests
    await until('the app to answer again', async () => (await api.get('/api/v1/notes', auth)).status === 200)
    const recoveredAt = Date.now()
    await until('20 requests after the recovery', () => countAfter(recoveredAt) >= 20)
    isRunning = false
    await Promise.all(loops)

    const whileDown = observed.filter(o => o.startedAt > downAt && o.endedAt < upAt)
    expect(whileDown.length).toBeGreaterThanOrEqual(20)
    for (const o of whileDown) {
      expect(o.answer.status, o.path).toBe(503)
      expect(o.answer.body, o.path).toMatchObject({ error: expect.stringContaining('database'), code: '08006' })
      expect(o.answer.headers.get('retry-after'), o.path).toBe('5')
    }
    // every path was tried while the database was down
    expect(new Set(whileDown.map(o => o.path)).size).toBe(requests.length)
    // a page of the app is a 503 too (an error page, not a redirect to the sign-in form)
    expect(page.status).toBe(503)
    const afterRecovery = observed.filter(o => o.startedAt > recoveredAt)
    expect(afterRecovery.filter(o => o.answer.status >= 300).map(o => `${o.path} ${o.answer.status}`)).toEqual([])
    // around the transitions, answers are either good or 503: never a 500 and never a stack trace
    expect(observed.filter(o => o.answer.status >= 300 && o.answer.status !== 503).map(o => `${o.path} ${o.answer.status}`)).toEqual([])
    expect(app.hasExited).toBe(false)
  })
})
