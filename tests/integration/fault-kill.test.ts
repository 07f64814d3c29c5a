import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { databaseKind } from '../support/database'
import { Client, createTeam, signUp, uniqueEmail } from '../support/http'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'

// The app is killed with SIGKILL (no shutdown hook runs) in the middle of a stream of writes, then
// started again on the same database: on Postgres, and on the embedded PGlite, whose data folder
// must open again with everything it acknowledged.
let app: TestApp
let receiver: WebhookReceiver
beforeAll(async () => {
  receiver = await startWebhookReceiver()
  app = await startApp({
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    // a delivery leased by the killed process is taken over once its lease (2 × timeout + 5 s) runs out
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  })
})
afterAll(async () => {
  await app?.stop()
  await receiver?.close()
})

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const value = await probe()
    if (value) return value
    await new Promise(r => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe(`the app killed with SIGKILL during writes (${databaseKind()})`, () => {
  it('keeps every acknowledged write, its activity entry and its webhook, and delivers the webhooks after the restart', async () => {
    const owner = await signUp(app, { name: 'Kim Killed' })
    const teamId = await createTeam(owner, 'Crash Team')
    expect((await owner.patch(`/api/teams/${teamId}`, { webhook_url: receiver.url })).status).toBe(200)
    receiver.secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
    const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'writer' })
    expect(created.status).toBe(201)
    const api = new Client(app)
    const headers = { authorization: `Bearer ${created.body.key}` }

    const ackedNotes: string[] = []
    const ackedInvitations: string[] = []
    let unacknowledged = 0
    let isKilled = false
    // four writers at once, each alternating a record through the public API and an invitation (which queues a webhook)
    const writer = async (n: number) => {
      for (let i = 0; !isKilled; i++) {
        try {
          if (i % 2 === 0) {
            const answer = await api.post('/api/v1/notes', { title: `note ${n}-${i}`, body: 'x'.repeat(200) }, headers)
            expect(answer.status, JSON.stringify(answer.body)).toBe(201)
            ackedNotes.push(answer.body.id)
          }
          else {
            const answer = await owner.post(`/api/teams/${teamId}/invitations`, { email: uniqueEmail(`w${n}`), role: 'member' })
            expect(answer.status, JSON.stringify(answer.body)).toBe(201)
            ackedInvitations.push(answer.body.id)
          }
        }
        catch (error) {
          if (!isKilled) throw error
          unacknowledged++
        }
      }
    }
    const writers = [0, 1, 2, 3].map(writer)
    await until('40 acknowledged writes', async () => ackedNotes.length + ackedInvitations.length >= 40)
    isKilled = true
    await app.kill('SIGKILL')
    await Promise.all(writers)
    expect(ackedNotes.length).toBeGreaterThan(0)
    expect(ackedInvitations.length).toBeGreaterThan(0)

    await app.restart()
    // nothing acknowledged is lost
    const notes = (await app.db.query<{ id: string }>('select id from public.notes where team_id = $1', [teamId])).rows.map(r => r.id)
    expect(notes).toEqual(expect.arrayContaining(ackedNotes))
    const invitations = (await app.db.query<{ id: string }>('select id from public.invitations where team_id = $1', [teamId])).rows.map(r => r.id)
    expect(invitations).toEqual(expect.arrayContaining(ackedInvitations))
    // a write that was committed but not acknowledged is possible; anything else is not
    expect(notes.length + invitations.length).toBeLessThanOrEqual(ackedNotes.length + ackedInvitations.length + unacknowledged)

    // each write has exactly one activity entry and each entry its write (written in the same transaction)
    for (const [table, ids] of [['notes', notes], ['invitations', invitations]] as const) {
      const { rows } = await app.db.query<{ record_id: string }>(
        `select record_id from public.activity_log where team_id = $1 and table_name = $2 and action = 'insert'`, [teamId, table])
      expect(rows.map(r => r.record_id).sort(), table).toEqual([...ids].sort())
    }

    // each invitation has its outbox row, and every one reaches the receiver after the restart
    const { rows: deliveries } = await app.db.query<{ id: string, invitation_id: string }>(
      `select id, body::jsonb -> 'data' ->> 'invitation_id' as invitation_id
       from public.webhook_deliveries where team_id = $1 and event = 'invitation.created'`, [teamId])
    expect(deliveries.map(d => d.invitation_id).sort()).toEqual([...invitations].sort())
    await until('every delivery to succeed', async () => {
      const { rows } = await app.db.query<{ n: number }>(
        `select count(*)::int as n from public.webhook_deliveries where team_id = $1 and status <> 'succeeded'`, [teamId])
      return rows[0]!.n === 0
    })
    const receivedIds = new Set(receiver.received.filter(r => r.verifyError === null).map(r => r.id))
    expect(deliveries.filter(d => !receivedIds.has(d.id))).toEqual([])

    // and the restarted app takes writes again
    const after = await api.post('/api/v1/notes', { title: 'after the restart' }, headers)
    expect(after.status).toBe(201)
    expect(app.hasExited).toBe(false)
  })
})
