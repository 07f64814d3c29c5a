import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logLines, startApp, type TestApp } from '../support/app'
import { KeyClient, signUp } from '../support/http'
import { waitFor } from '../support/wait'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'

// Two app processes on one Postgres database, each woken by notifications on its own listening
// connection; they poll once every ten minutes, so whatever arrives sooner was woken.
const settings = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,1',
  WEBHOOK_TIMEOUT_MS: '3000',
  WEBHOOK_POLL_INTERVAL_MS: '600000',
}

/** The backend pids of the processes' listening connections on the app's database. */
async function listeners(app: TestApp): Promise<number[]> {
  const { rows } = await app.db.query<{ pid: number }>(
    `select pid from pg_stat_activity where application_name = 'tws-listen' and datname = current_database()`,
  )
  return rows.map(row => row.pid)
}

let first: TestApp
let second: TestApp
let receiver: WebhookReceiver
let clients: KeyClient[]
let teamId: string
beforeAll(async () => {
  first = await startApp(settings)
  second = await startApp(settings, { databaseUrl: first.databaseUrl })
  receiver = await startWebhookReceiver()
  const owner = await signUp(first, { name: 'Wake Owner' })
  teamId = (await owner.post('/api/teams', { name: 'Wake Team' })).body.id
  receiver.secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
  expect((await owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url: receiver.url, events: ['tasks.created'] })).status).toBe(201)
  const key = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'writer' })).body.key
  clients = [new KeyClient(first, key), new KeyClient(second, key)]
  for (const app of [first, second]) {
    await waitFor('the worker to start', () => logLines(app).some(line => line.tag === 'webhooks' && line.message === 'Delivery worker running (polls every 600000 ms)'), { timeoutMs: 20_000 })
  }
  await waitFor('both processes to listen', async () => (await listeners(first)).length === 2)
})
afterAll(async () => {
  await receiver?.close()
  await second?.stop()
  await first?.stop()
})

async function writeAndReceive(client: KeyClient, title: string) {
  const created = await client.post('/api/v1/tasks', { title })
  expect(created.status).toBe(201)
  const arrived = await waitFor(`the event of "${title}" to arrive`, () => receiver.received.find(r => r.payload?.data.id === created.body.id))
  expect(arrived.verifyError).toBeNull()
}

describe('two processes woken by notifications', () => {
  it('deliver a burst of writes through both once each', async () => {
    const before = receiver.received.length
    let next = 0
    const ids: string[] = []
    await Promise.all(Array.from({ length: 8 }, async (_, writer) => {
      while (next < 300) {
        const answer = await clients[writer % 2]!.post('/api/v1/tasks', { title: `burst ${next++}` })
        expect(answer.status).toBe(201)
        ids.push(answer.body.id)
      }
    }))
    await waitFor('every burst event to arrive', () => receiver.received.length >= before + ids.length, { timeoutMs: 60_000 })
    await waitFor('every delivery to be recorded', async () => {
      const { rows } = await first.db.query(`select count(*)::int as n from public.webhook_deliveries where team_id = $1 and status <> 'succeeded'`, [teamId])
      return rows[0].n === 0
    })
    const burst = receiver.received.slice(before)
    expect(burst.every(r => r.verifyError === null)).toBe(true)
    expect(new Set(burst.map(r => r.id)).size).toBe(burst.length)
    expect(burst.map(r => r.payload!.data.id).sort()).toEqual([...ids].sort())
    const { rows } = await first.db.query(
      'select attempts, count(*)::int as n from public.webhook_deliveries where team_id = $1 and id = any ($2::uuid[]) group by attempts',
      [teamId, burst.map(r => r.id)],
    )
    expect(rows).toEqual([{ attempts: 1, n: ids.length }])
  })

  it('keep delivering after their listening connections are terminated', async () => {
    const cut = await listeners(first)
    expect(cut).toHaveLength(2)
    await first.db.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [cut])
    // written at once: its notification may be lost with the connection; the worker looks again when it listens again
    await writeAndReceive(clients[0]!, 'right after the cut')
    await waitFor('both processes to listen again', async () => {
      const now = await listeners(first)
      return now.length === 2 && now.every(pid => !cut.includes(pid))
    })
    await writeAndReceive(clients[0]!, 'after the reconnection, first')
    await writeAndReceive(clients[1]!, 'after the reconnection, second')
  })
})
