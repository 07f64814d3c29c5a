import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logLines, startApp, type TestApp } from '../support/app'
import { keyClientFor, type KeyClient } from '../support/http'
import { waitFor } from '../support/wait'
import { startWebhookReceiver, teamWithSecret, type WebhookReceiver } from '../support/webhook-receiver'

// The worker polls once every ten minutes: whatever arrives sooner was woken by the notification
// that the write's commit sent.
const settings = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,1',
  WEBHOOK_TIMEOUT_MS: '3000',
  WEBHOOK_POLL_INTERVAL_MS: '600000',
}

let app: TestApp
let receiver: WebhookReceiver
let api: KeyClient
let teamId: string
beforeAll(async () => {
  app = await startApp(settings)
  const team = await teamWithSecret(app, { owner: 'Wake Owner', team: 'Wake Team' })
  teamId = team.teamId
  receiver = await startWebhookReceiver()
  receiver.secret = team.secret
  expect((await team.owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url: receiver.url, events: ['tasks.created'] })).status).toBe(201)
  api = await keyClientFor(app, team, 'writer')
  // its one look at start is over once it says it is running
  await waitFor('the worker to start', () => logLines(app).some(line => line.tag === 'webhooks' && line.message === 'Delivery worker running (polls every 600000 ms)'), { timeoutMs: 20_000 })
})
afterAll(async () => {
  await receiver?.close()
  await app?.stop()
})

describe('webhooks woken by the queuing commit', () => {
  it('delivers a record event without waiting for the poll', async () => {
    const created = await api.post('/api/v1/tasks', { title: 'woken' })
    expect(created.status).toBe(201)
    const arrived = await waitFor('the event to arrive', () => receiver.received.find(r => r.payload?.data.id === created.body.id))
    expect(arrived.verifyError).toBeNull()
    expect(arrived.payload!.type).toBe('tasks.created')
  })

  it('delivers a burst of writes exactly once each', async () => {
    const before = receiver.received.length
    const titles = Array.from({ length: 120 }, (_, i) => `burst ${i}`)
    let next = 0
    const ids: string[] = []
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < titles.length) {
        const answer = await api.post('/api/v1/tasks', { title: titles[next++] })
        expect(answer.status).toBe(201)
        ids.push(answer.body.id)
      }
    }))
    await waitFor('every burst event to arrive', () => receiver.received.length >= before + ids.length, { timeoutMs: 30_000 })
    await waitFor('every delivery to be recorded', async () => {
      const { rows } = await app.db.query(`select count(*)::int as n from public.webhook_deliveries where team_id = $1 and status <> 'succeeded'`, [teamId])
      return rows[0].n === 0
    })
    const burst = receiver.received.slice(before)
    expect(burst.every(r => r.verifyError === null)).toBe(true)
    // one request per event: no webhook-id twice, every task once
    expect(new Set(burst.map(r => r.id)).size).toBe(burst.length)
    expect(burst.map(r => r.payload!.data.id).sort()).toEqual([...ids].sort())
    const { rows } = await app.db.query(
      `select d.attempts, count(*)::int as n from public.webhook_deliveries d
       where d.team_id = $1 and d.id = any ($2::uuid[]) group by d.attempts`,
      [teamId, burst.map(r => r.id)],
    )
    expect(rows).toEqual([{ attempts: 1, n: ids.length }])
    const { rows: attempts } = await app.db.query(
      'select count(*)::int as n from public.webhook_attempts where team_id = $1 and delivery_id = any ($2::uuid[])',
      [teamId, burst.map(r => r.id)],
    )
    expect(attempts[0].n).toBe(ids.length)
  })

  it('wakes for invitation events too', async () => {
    const { owner, teamId: inviteTeam, secret } = await teamWithSecret(app, { owner: 'Invite Owner', team: 'Invite Team' })
    const invitationReceiver = await startWebhookReceiver()
    try {
      invitationReceiver.secret = secret
      expect((await owner.patch(`/api/teams/${inviteTeam}`, { webhook_url: invitationReceiver.url })).status).toBe(200)
      const invited = await owner.post(`/api/teams/${inviteTeam}/invitations`, { email: 'woken@example.com', role: 'member' })
      expect(invited.status).toBe(201)
      const [arrived] = await invitationReceiver.waitFor(1)
      expect(arrived!.verifyError).toBeNull()
      expect(arrived!.payload!.type).toBe('invitation.created')
    }
    finally {
      await invitationReceiver.close()
    }
  })
})
