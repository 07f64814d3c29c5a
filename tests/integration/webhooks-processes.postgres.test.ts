import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, signUp } from '../support/http'
import { waitFor } from '../support/wait'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'

// Two app processes on one Postgres database deliver record events to a receiver that counts them.
// A 3 s timeout and a 7 s claim lease, so that a delivery claimed by a killed process is taken over quickly.
const settings = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  WEBHOOK_TIMEOUT_MS: '3000',
  WEBHOOK_LEASE_SECONDS: '7',
  WEBHOOK_POLL_INTERVAL_MS: '100',
}

/** The pid of the process holding the local end of a TCP connection from 127.0.0.1:`port`. */
function pidOfConnection(port: number): number | null {
  const lines = execFileSync('ss', ['-tnpH', `sport = :${port}`], { encoding: 'utf8' })
  const match = /pid=(\d+)/.exec(lines)
  return match ? Number(match[1]) : null
}

// PGlite is one process's embedded database: several processes need a Postgres server (this file runs
// in the postgres project only)
describe('two app processes on one database', () => {
  let first: TestApp
  let second: TestApp
  let receiver: WebhookReceiver
  let holdTitle = ''
  // the process that sent the held request and its redelivery, looked up while the connection is open
  const senderPids = new Map<number, number | null>()
  beforeAll(async () => {
    first = await startApp(settings)
    second = await startApp(settings, { databaseUrl: first.databaseUrl })
    // holds open the first request for the task titled holdTitle; answers 200 to everything else
    let isHeld = false
    receiver = await startWebhookReceiver((_index, _request) => 200)
    receiver.behaviour = (index) => {
      const delivery = receiver.received[index]!
      if (!holdTitle || !delivery.body.includes(holdTitle)) return 200
      senderPids.set(index, pidOfConnection(delivery.remotePort))
      if (isHeld) return 200
      isHeld = true
      return 'hang'
    }
  })
  afterAll(async () => {
    await receiver?.close()
    await second?.stop()
    await first?.stop()
  })

  it('deliver each event once, and none is lost when a process is killed in the middle of a delivery', async () => {
    const owner = await signUp(first, { name: 'Two Processes' })
    const teamId = (await owner.post('/api/teams', { name: 'Shared' })).body.id
    receiver.secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
    expect((await owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url: receiver.url, events: ['tasks.created'] })).status).toBe(201)
    const key = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'writer' })).body.key
    const clients = [new KeyClient(first, key), new KeyClient(second, key)]

    // a burst of writes through both processes
    const writes = await Promise.all(Array.from({ length: 60 }, (_, i) => clients[i % 2]!.post('/api/v1/tasks', { title: `burst ${i}` })))
    expect(writes.every(answer => answer.status === 201)).toBe(true)
    await waitFor('every burst event to arrive', () => new Set(receiver.received.map(delivery => delivery.id)).size >= 60, { timeoutMs: 60_000 })

    // one delivery held open by the receiver; the process sending it is killed
    holdTitle = 'held while killed'
    expect((await clients[1]!.post('/api/v1/tasks', { title: holdTitle })).status).toBe(201)
    const held = await waitFor('the held delivery to arrive', () => receiver.received.find(delivery => delivery.body.includes(holdTitle)), { timeoutMs: 20_000 })
    const holder = senderPids.get(receiver.received.indexOf(held))
    expect([first.pid, second.pid]).toContain(holder)
    const [victim, survivor] = holder === first.pid ? [first, second] : [second, first]
    await victim.kill('SIGKILL')

    // written through the survivor while the held delivery's claim runs out
    const survivorClient = new KeyClient(survivor, key)
    for (let i = 0; i < 5; i++) expect((await survivorClient.post('/api/v1/tasks', { title: `after ${i}` })).status).toBe(201)

    const redelivered = await waitFor('the held event to be delivered again', () => {
      const copies = receiver.received.filter(delivery => delivery.id === held.id)
      return copies.length >= 2 ? copies : undefined
    }, { timeoutMs: 30_000 })
    expect(senderPids.get(receiver.received.indexOf(redelivered[1]!))).toBe(survivor.pid)
    await waitFor('every delivery to succeed', async () => {
      const { rows } = await survivor.db.query(`select count(*)::int as n from public.webhook_deliveries where team_id = $1 and status <> 'succeeded'`, [teamId])
      return rows[0].n === 0
    }, { timeoutMs: 30_000 })

    const { rows } = await survivor.db.query<{ id: string, attempts: number }>(
      `select id, attempts from public.webhook_deliveries where team_id = $1`,
      [teamId],
    )
    expect(rows).toHaveLength(66)
    expect(receiver.received.every(delivery => delivery.verifyError === null)).toBe(true)
    // every event arrived; one arrives more than once only when an attempt was recorded as failed
    // (a retry) or, for the held one, when the attempt died with its process: same webhook-id each time
    const arrivals = new Map<string, number>()
    for (const delivery of receiver.received) arrivals.set(delivery.id, (arrivals.get(delivery.id) ?? 0) + 1)
    expect([...arrivals.keys()].sort()).toEqual(rows.map(row => row.id).sort())
    for (const row of rows) expect(arrivals.get(row.id), row.id).toBe(row.attempts + (row.id === held.id ? 1 : 0))
    expect(rows.find(row => row.id === held.id)!.attempts).toBe(1)
  })
})
