import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { createServerDatabase } from '../support/database'
import { KeyClient, createTeam, signUp, type Client } from '../support/http'
import { lastToolResult, startScriptedModel, type ScriptedModelServer } from '../support/openai-server'
import { startPgbouncer, type Pgbouncer } from '../support/pgbouncer'
import { waitFor } from '../support/wait'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'

// One app process whose DATABASE_URL is PgBouncer in transaction mode (4 server connections, so
// that consecutive transactions of one client land on different server connections), with
// DATABASE_DIRECT_URL on the database itself: requests, webhooks and the chat run through the
// pooler, migrations on the direct connection.
let database: { url: string, drop: () => Promise<void> }
let bouncer: Pgbouncer
let receiver: WebhookReceiver
let model: ScriptedModelServer
let app: TestApp
let owner: Client
let teamId: string
let api: KeyClient

beforeAll(async () => {
  // empty: the app applies the migrations itself, on the direct connection
  database = await createServerDatabase({ empty: true })
  bouncer = await startPgbouncer(database.url, { poolSize: 4 })
  receiver = await startWebhookReceiver()
  model = await startScriptedModel()
  app = await startApp({
    NUXT_DATABASE_URL: bouncer.url,
    NUXT_DATABASE_DIRECT_URL: database.url,
    API_RATE_LIMIT: '100000',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    LLM_PROVIDER_API_KEY: 'test-key',
    LLM_PROVIDER_BASE_URL: model.url,
    LLM_MODEL: 'scripted-model',
  }, { databaseUrl: database.url })
  owner = await signUp(app)
  teamId = await createTeam(owner, 'Pooled')
  const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Through the pooler' })
  expect(created.status).toBe(201)
  api = new KeyClient(app, created.body.key)
})
afterAll(async () => {
  await app?.stop()
  await bouncer?.stop()
  await database?.drop()
  await receiver?.close()
  await model?.close()
})

describe('behind PgBouncer in transaction mode', () => {
  it('serves 200 concurrent API reads and writes without an error, with one activity entry per write', async () => {
    const writes = Array.from({ length: 100 }, (_, i) => api.post('/api/v1/tasks', { title: `Pooled ${i}` }))
    const reads = Array.from({ length: 100 }, () => api.get('/api/v1/tasks?limit=10'))
    const answers = await Promise.all([...writes, ...reads])
    const failures = answers.filter(answer => answer.status >= 300).map(answer => `${answer.status} ${JSON.stringify(answer.body)}`)
    expect(failures, bouncer.log()).toEqual([])
    const ids = answers.slice(0, 100).map(answer => answer.body.id as string)
    expect(new Set(ids).size).toBe(100)
    const { rows } = await app.db.query<{ record_id: string, n: number }>(
      `select record_id, count(*)::int as n from public.activity_log where team_id = $1 and table_name = 'tasks' and action = 'insert' group by record_id`,
      [teamId],
    )
    expect(rows.map(row => row.record_id).sort()).toEqual([...ids].sort())
    expect(rows.every(row => row.n === 1)).toBe(true)
  })

  it('refuses within 1 s a key revoked with plain SQL on the direct connection', async () => {
    const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Revoked elsewhere' })
    const doomed = new KeyClient(app, created.body.key)
    expect((await doomed.get('/api/v1/tasks?limit=1')).status).toBe(200)
    await app.db.query('update public.api_keys set revoked_at = now() where id = $1', [created.body.id])
    await waitFor('the revoked key to be refused', async () => (await doomed.get('/api/v1/tasks?limit=1')).status === 401, { timeoutMs: 1000, intervalMs: 20 })
    expect((await api.get('/api/v1/tasks?limit=1')).status).toBe(200)
  })

  it('delivers record events to a receiver', async () => {
    receiver.secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
    expect((await owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url: receiver.url, events: ['tasks.created'] })).status).toBe(201)
    const titles = ['Delivered A', 'Delivered B', 'Delivered C']
    const created = await Promise.all(titles.map(title => api.post('/api/v1/tasks', { title })))
    expect(created.map(answer => answer.status)).toEqual([201, 201, 201])
    const received = await receiver.waitFor(3)
    expect(received.map(delivery => delivery.verifyError)).toEqual([null, null, null])
    expect(received.map(delivery => delivery.payload!.data.title).sort()).toEqual(titles)
    expect(received.map(delivery => delivery.payload!.data.id).sort()).toEqual(created.map(answer => answer.body.id).sort())
  })

  it('binds the chat\'s queries to their team', async () => {
    const other = await signUp(app)
    const otherTeam = await createTeam(other, 'Not yours')
    const otherKey = (await other.post(`/api/teams/${otherTeam}/api-keys`, { name: 'Other' })).body.key
    expect((await new KeyClient(app, otherKey).post('/api/v1/tasks', { title: 'OTHER TEAM SECRET' })).status).toBe(201)
    const chat = await owner.post('/api/chats', {})
    expect(chat.status).toBe(201)
    // several turns, so that the chat's transactions meet more than one server connection
    const seen: string[][] = []
    for (let i = 0; i < 4; i++) {
      model.enqueue(
        { toolCalls: [{ name: 'query_database', input: { sql: 'select title from tasks' } }] },
        (request) => {
          const result = lastToolResult(request)
          seen.push((result.rows as string[][]).map(row => row[0]!))
          return { text: `${result.row_count} tasks.` }
        },
      )
      const answer = await owner.post(`/api/chats/${chat.body.id}`, { message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'Which tasks do we have?' }] } })
      expect(answer.status).toBe(200)
    }
    const { rows } = await app.db.query<{ title: string }>('select title from public.tasks where team_id = $1', [teamId])
    const ours = rows.map(row => row.title).sort()
    expect(ours.length).toBeGreaterThan(100)
    expect(seen).toHaveLength(4)
    for (const titles of seen) {
      // the chat shows at most 100 rows: every one is this team's
      expect(titles).toHaveLength(100)
      expect(titles.every(title => ours.includes(title))).toBe(true)
      expect(titles).not.toContain('OTHER TEAM SECRET')
    }
  })
})
