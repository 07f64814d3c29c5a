import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../server/utils/db/db-drivers'
import { ensureWebhookSecret, fireWebhook } from '../../server/utils/webhooks/webhooks'
import { forgetLapsedHolds, startWebhookWorker, type WebhookSettings } from '../../server/utils/webhooks/webhooks-worker'
import { freshDatabase } from '../support/database'
import { waitFor } from '../support/wait'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'

// Workers (as app instances would run them) against one database, in this process.
let db: Database
let close: () => Promise<void>
let receiver: WebhookReceiver
beforeAll(async () => {
  ({ db, close } = await freshDatabase())
  // a receiver that answers slowly, so that both workers are busy at the same time
  receiver = await startWebhookReceiver(() => 200, { delayMs: 200 })
})
afterAll(async () => {
  await receiver?.close()
  await close?.()
})

const settings: WebhookSettings = { allowPrivateNetworks: true, retrySchedule: [1, 1], timeoutMs: 2000, pollIntervalMs: 50, leaseSeconds: 10, maintenanceIntervalMs: 60_000 }

async function teamWithUrl(url: string | null): Promise<string> {
  const { rows } = await db.query<{ id: string }>('insert into public.teams (name, webhook_url) values ($1, $2) returning id', ['Workers', url])
  await ensureWebhookSecret(db, rows[0]!.id)
  return rows[0]!.id
}

describe('webhook workers', () => {
  it('deliver each event once when two run at once, each receiver from one of them at a time', async () => {
    const other = await startWebhookReceiver(() => 200, { delayMs: 200 })
    const receivers = [receiver, other]
    const teams = [await teamWithUrl(receiver.url), await teamWithUrl(other.url)]
    const ids: string[] = []
    // the first team's events first (the claims take the oldest first), in a transaction of their own
    for (const [i, teamId] of teams.entries()) {
      const { rows } = await db.query<{ secret: string }>('select secret from public.webhook_secrets where team_id = $1', [teamId])
      receivers[i]!.secret = rows[0]!.secret
      ids.push(...await db.transaction(async (tx) => {
        const queued: string[] = []
        for (let n = 0; n < 20; n++) queued.push((await fireWebhook(tx, teamId, 'webhook.test', { n }))!)
        return queued
      }))
    }
    const distinctHolders = async () => {
      const { rows } = await db.query<{ n: number }>('select count(distinct worker)::int as n from public.webhook_receiver_holds where target = any ($1::uuid[]) and held_until > now()', [teams])
      return rows[0]!.n
    }
    // the second worker starts once the first is sending: the first holds the first team's receiver
    const workers = [startWebhookWorker(db, settings, 4)]
    try {
      await receiver.waitFor(1)
      workers.push(startWebhookWorker(db, settings, 4))
      // the second takes the receiver nobody holds: both send at once, each to its own receiver
      await waitFor('each receiver held by another worker', async () => await distinctHolders() === 2, { timeoutMs: 20_000 })
      await Promise.all(receivers.map(r => r.waitFor(20)))
      await waitFor('every delivery to be recorded', async () => {
        const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from public.webhook_deliveries where team_id = any ($1::uuid[]) and status = 'succeeded'`, [teams])
        return rows[0]!.n === 40
      }, { timeoutMs: 20_000 })
    }
    finally {
      await Promise.all(workers.map(worker => worker.stop()))
      await other.close()
    }
    const received = receivers.flatMap(r => r.received)
    expect(received.map(r => r.id).sort()).toEqual([...ids].sort())
    expect(received.every(r => r.verifyError === null)).toBe(true)
    // each worker has at most 4 deliveries in flight: more at one receiver means both sent to it
    expect(receivers.map(r => r.maxInFlight)).toEqual([4, 4])
    const { rows: counts } = await db.query<{ status: string, attempts: number, n: number }>(
      'select status, attempts, count(*)::int as n from public.webhook_deliveries where team_id = any ($1::uuid[]) group by status, attempts',
      [teams],
    )
    expect(counts).toEqual([{ status: 'succeeded', attempts: 1, n: 40 }])
    // workers that stop let their receivers go
    const { rows: holds } = await db.query('select * from public.webhook_receiver_holds where target = any ($1::uuid[])', [teams])
    expect(holds).toEqual([])
  })

  it('pass over a receiver another worker holds until the hold runs out (that worker died)', async () => {
    const held = await startWebhookReceiver(() => 200)
    const teamId = await teamWithUrl(held.url)
    const { rows: secrets } = await db.query<{ secret: string }>('select secret from public.webhook_secrets where team_id = $1', [teamId])
    held.secret = secrets[0]!.secret
    // a worker that is gone holds the receiver for another second and a half
    const { rows } = await db.query<{ until: number }>(
      `insert into public.webhook_receiver_holds (target, worker, held_until) values ($1, gen_random_uuid(), now() + interval '1.5 seconds')
       returning (extract(epoch from held_until) * 1000)::float8 as until`,
      [teamId],
    )
    const heldUntil = rows[0]!.until
    await db.transaction(async (tx) => {
      for (let n = 0; n < 5; n++) await fireWebhook(tx, teamId, 'webhook.test', { n })
    })
    const worker = startWebhookWorker(db, settings, 4)
    try {
      await held.waitFor(5)
    }
    finally {
      await worker.stop()
      await held.close()
    }
    // nothing was sent before the hold ran out (the worker polled every 50 ms meanwhile)
    expect(Math.min(...held.received.map(r => r.receivedAt))).toBeGreaterThanOrEqual(Math.floor(heldUntil))
    expect(held.received.every(r => r.verifyError === null)).toBe(true)
  })

  it('forget holds that ran out over a minute ago, and keep the others', async () => {
    const targets = [await teamWithUrl('https://hooks.example.com/a'), await teamWithUrl('https://hooks.example.com/b'), await teamWithUrl('https://hooks.example.com/c')]
    await db.query(
      `insert into public.webhook_receiver_holds (target, worker, held_until)
       values ($1, gen_random_uuid(), now() - interval '2 minutes'), ($2, gen_random_uuid(), now() - interval '10 seconds'), ($3, gen_random_uuid(), now() + interval '5 seconds')`,
      targets,
    )
    expect(await forgetLapsedHolds(db)).toBe(1)
    const { rows } = await db.query<{ target: string }>('select target from public.webhook_receiver_holds where target = any ($1::uuid[]) order by held_until', [targets])
    expect(rows.map(row => row.target)).toEqual(targets.slice(1))
  })

  it('hold more of a receiver\'s deliveries once it answers fast, and still send no more than the per-endpoint bound at once', async () => {
    // the first four answers come at once; every later request is left hanging
    const fast = await startWebhookReceiver(index => index < 4 ? 200 : 'hang')
    const teamId = await teamWithUrl(fast.url)
    await db.transaction(async (tx) => {
      for (let i = 0; i < 60; i++) await fireWebhook(tx, teamId, 'webhook.test', { n: i })
    })
    // 2 at once per receiver, claims of up to 20: a receiver not heard from yet gets 2 in flight
    // and 2 waiting; one that answered within a fraction of the lease gets up to 40 held, two
    // claims' worth (the claims top it up while the hanging ones are in flight)
    // (a timeout long enough that the hanging ones are still in flight when counted)
    const worker = startWebhookWorker(db, { ...settings, timeoutMs: 10_000, leaseSeconds: 30 }, { total: 20, perEndpoint: 2, batchSize: 20 })
    const countByStatus = async () => {
      const { rows } = await db.query<{ status: string, n: number }>(
        'select status, count(*)::int as n from public.webhook_deliveries where team_id = $1 group by status',
        [teamId],
      )
      return Object.fromEntries(rows.map(row => [row.status, row.n]))
    }
    try {
      // the two requests that hang must have reached the receiver too: the held batch is recorded
      // as soon as the four answers are, which may be before the second request arrives
      const counts = await waitFor('the fast receiver\'s four answers recorded, two claims held and two requests hanging', async () => {
        const counts = await countByStatus()
        return counts.succeeded === 4 && counts.delivering === 40 && fast.received.length >= 6 && counts
      }, { timeoutMs: 20_000 })
      expect(counts).toEqual({ succeeded: 4, delivering: 40, pending: 16 })
      expect(fast.maxInFlight).toBe(2)
      // while two hang, no third is sent
      expect(fast.received).toHaveLength(6)
    }
    finally {
      // ends the hanging requests, so that the worker stops without waiting for their timeout
      await fast.close()
      await worker.stop()
    }
  })

  it('claim again only when a receiver has used half of what it may hold and may have more due, and record attempts in batches', async () => {
    // a database of its own: the earlier tests leave deliveries to receivers that are gone
    const own = await freshDatabase()
    const fast = await startWebhookReceiver(() => 200)
    const { rows: teams } = await own.db.query<{ id: string }>('insert into public.teams (name, webhook_url) values ($1, $2) returning id', ['Batches', fast.url])
    const teamId = teams[0]!.id
    await ensureWebhookSecret(own.db, teamId)
    await own.db.transaction(async (tx) => {
      for (let i = 0; i < 30; i++) await fireWebhook(tx, teamId, 'webhook.test', { n: i })
    })
    // the statements the worker sends, seen on their way to the database; no poll within the test
    const sent = { claims: 0, records: 0 }
    const watched: Database = Object.create(own.db, {
      query: {
        value: (text: string, params?: unknown[]) => {
          if (text.includes('claim_webhook_deliveries(')) sent.claims++
          if (text.includes('insert into public.webhook_attempts')) sent.records++
          return own.db.query(text, params)
        },
      },
    })
    const worker = startWebhookWorker(watched, { ...settings, pollIntervalMs: 60_000 }, { total: 100, perEndpoint: 10, batchSize: 100 })
    let attempts: number
    try {
      await fast.waitFor(30)
      await waitFor('every delivery to be recorded', async () => {
        const { rows } = await own.db.query<{ n: number }>(`select count(*)::int as n from public.webhook_deliveries where status = 'succeeded'`)
        return rows[0]!.n === 30
      }, { timeoutMs: 20_000 })
      const { rows } = await own.db.query<{ n: number }>('select count(*)::int as n from public.webhook_attempts')
      attempts = rows[0]!.n
    }
    finally {
      await worker.stop()
      await fast.close()
      await own.close()
    }
    // the first claim takes what a receiver not heard from may hold (10 in flight, 10 waiting), all
    // of it, so more may be due; once it has answered it may hold 200, so the first answer claims
    // again and takes the last 10, fewer than it had room for: nothing more is due, and the other
    // 29 answers claim nothing
    expect(sent.claims).toBe(2)
    expect(sent.records).toBeLessThan(30)
    expect(attempts).toBe(30)
  })

  it('queues nothing for a team without a webhook URL', async () => {
    const teamId = await teamWithUrl(null)
    const id = await db.transaction(tx => fireWebhook(tx, teamId, 'webhook.test', {}))
    expect(id).toBeNull()
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from public.webhook_deliveries where team_id = $1', [teamId])
    expect(rows[0]!.n).toBe(0)
  })
})
