import { describe, expect, it } from 'vitest'
import { logLines, type TestApp } from '../support/app'
import { webhookAppForFile } from '../support/file-hooks'
import { signUp, uniqueEmail, type Client, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'
import { teamWithSecret, type ReceiverBehaviour, type WebhookReceiver } from '../support/webhook-receiver'

// A shortened retry schedule (1 s, 3 s, 2 s), a 1 s timeout and a fast poll; receivers run on 127.0.0.1.
const schedule = [1, 3, 2]
const timeoutMs = 1000

let app: TestApp
let fx: TeamFixture
const receiverFor = webhookAppForFile({ WEBHOOK_RETRY_SCHEDULE: schedule.join(','), WEBHOOK_TIMEOUT_MS: String(timeoutMs) }, (started) => {
  ({ app, team: fx } = started)
})

/** A team of its own whose webhook_url points at a new receiver that verifies with the team's secret. */
async function teamWithReceiver(behaviour?: ReceiverBehaviour) {
  const { owner, teamId, secret } = await teamWithSecret(app, { owner: 'Hook Owner', team: 'Hook Team' })
  const receiver = await receiverFor(secret, behaviour)
  const saved = await owner.patch(`/api/teams/${teamId}`, { webhook_url: receiver.url })
  expect(saved.status).toBe(200)
  return { owner, teamId, receiver }
}

async function deliveryRow(id: string) {
  const { rows } = await app.db.query('select status, attempts, last_status_code from public.webhook_deliveries where id = $1', [id])
  return rows[0]
}

async function waitForDelivery(id: string, status: string, timeout = 20_000) {
  const deadline = Date.now() + timeout
  while (Date.now() < deadline) {
    const row = await deliveryRow(id)
    if (row?.status === status) return row
    await new Promise(r => setTimeout(r, 100))
  }
  throw new Error(`delivery ${id} did not reach ${status}: ${JSON.stringify(await deliveryRow(id))}`)
}

/**
 * Queues another test event and waits until it has arrived and is recorded: the worker has moved on
 * past anything due before it, so counting earlier deliveries is final.
 */
async function afterLaterDelivery(owner: Client, teamId: string, receiver: WebhookReceiver) {
  const later = await owner.post(`/api/teams/${teamId}/webhooks/test`)
  await waitFor('a later delivery to arrive', () => receiver.received.some(r => r.id === later.body.id), { timeoutMs: 20_000 })
  await waitForDelivery(later.body.id, 'succeeded')
}

async function attemptsOf(id: string) {
  const { rows } = await app.db.query('select attempt, status_code, error from public.webhook_attempts where delivery_id = $1 order by attempt', [id])
  return rows
}

describe('permissions of the webhook routes', () => {
  it('lets owners and admins manage; members get 403, outsiders 404, signed-out callers 401', async () => {
    const base = `/api/teams/${fx.teamId}/webhooks`
    for (const client of [fx.owner, fx.admin]) {
      expect((await client.get(`${base}/secret`)).status).toBe(200)
      expect((await client.post(`${base}/secret/rotate`)).status).toBe(200)
      expect((await client.get(`${base}/deliveries`)).status).toBe(200)
      // no webhook URL yet: nothing to send
      expect((await client.post(`${base}/test`)).status).toBe(409)
    }
    for (const [client, status] of [[fx.member, 403], [fx.outsider, 404], [fx.anonymous, 401]] as const) {
      expect((await client.get(`${base}/secret`)).status).toBe(status)
      expect((await client.post(`${base}/secret/rotate`)).status).toBe(status)
      expect((await client.get(`${base}/deliveries`)).status).toBe(status)
      expect((await client.post(`${base}/deliveries/00000000-0000-4000-8000-000000000000/resend`)).status).toBe(status)
      expect((await client.post(`${base}/test`)).status).toBe(status)
    }
  })

  it('gives each team a whsec_ secret made with the team, and rotation replaces it', async () => {
    const { rows } = await app.db.query('select secret from public.webhook_secrets where team_id = $1', [fx.teamId])
    expect(rows[0].secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const before = (await fx.owner.get(`/api/teams/${fx.teamId}/webhooks/secret`)).body.secret
    const rotated = await fx.admin.post(`/api/teams/${fx.teamId}/webhooks/secret/rotate`)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(before)
    expect((await fx.owner.get(`/api/teams/${fx.teamId}/webhooks/secret`)).body).toEqual({ secret: rotated.body.secret })
  })
})

describe('invitation events', () => {
  it('delivers invitation.created, .revoked and .accepted, signed per Standard Webhooks, with the documented data', async () => {
    const { owner, teamId, receiver } = await teamWithReceiver()
    const created = (await owner.post(`/api/teams/${teamId}/invitations`, { email: uniqueEmail('hooked'), role: 'admin' })).body
    const toRevoke = (await owner.post(`/api/teams/${teamId}/invitations`, { email: uniqueEmail('gone'), role: 'member' })).body
    await owner.delete(`/api/teams/${teamId}/invitations/${toRevoke.id}`)
    const invitee = await signUp(app, { email: created.email })
    await invitee.post(`/api/invitations/${created.invite_url.split('/invite/')[1]}/accept`)

    const received = await receiver.waitFor(4)
    expect(received.map(r => r.verifyError)).toEqual([null, null, null, null])
    expect(new Set(received.map(r => r.id)).size).toBe(4)
    const byType = Object.fromEntries(received.filter(r => r.payload!.data.invitation_id === created.id || r.payload!.type === 'invitation.revoked').map(r => [r.payload!.type, r.payload!]))
    expect(received.filter(r => r.payload!.type === 'invitation.created').map(r => r.payload!.data.invitation_id).sort()).toEqual([created.id, toRevoke.id].sort())
    expect(byType['invitation.created']!.data).toEqual({
      invitation_id: created.id,
      team_id: teamId,
      team_name: 'Hook Team',
      email: created.email,
      role: 'admin',
      expires_at: created.expires_at,
      invite_url: created.invite_url,
    })
    expect(byType['invitation.revoked']!.data).toEqual({ invitation_id: toRevoke.id, team_id: teamId, email: toRevoke.email })
    expect(byType['invitation.accepted']!.data).toEqual({ invitation_id: created.id, team_id: teamId, email: created.email, role: 'admin', user_id: invitee.user!.id })
    expect(Date.parse(byType['invitation.accepted']!.timestamp)).toBeGreaterThan(Date.now() - 60_000)

    const list = await owner.get(`/api/teams/${teamId}/webhooks/deliveries`)
    expect(list.status).toBe(200)
    expect(list.body.map((d: { event: string }) => d.event)).toEqual(['invitation.accepted', 'invitation.revoked', 'invitation.created', 'invitation.created'])
    for (const delivery of list.body) await waitForDelivery(delivery.id, 'succeeded')
    const after = await owner.get(`/api/teams/${teamId}/webhooks/deliveries`)
    expect(after.body[0]).toEqual({
      id: expect.any(String),
      event: 'invitation.accepted',
      status: 'succeeded',
      attempts: 1,
      last_status_code: 200,
      last_error: null,
      next_attempt_at: null,
      created_at: expect.any(String),
      endpoint_id: null,
      attempts_list: [{ attempt: 1, status_code: 200, error: null, duration_ms: expect.any(Number), response_body: 'ok', created_at: expect.any(String) }],
    })
  })

  it('queues nothing when an invitation fails (the outbox row rolls back with the change)', async () => {
    const { owner, teamId } = await teamWithReceiver()
    const answer = await owner.post(`/api/teams/${teamId}/invitations`, { email: owner.user!.email, role: 'member' })
    expect(answer.status).toBe(409)
    const { rows } = await app.db.query('select count(*)::int as n from public.webhook_deliveries where team_id = $1', [teamId])
    expect(rows[0].n).toBe(0)
  })
})

describe('delivery and retries', () => {
  it('retries a receiver that answers 500 twice, then 200: three requests with the same webhook-id, on schedule', async () => {
    const { owner, teamId, receiver } = await teamWithReceiver(index => (index < 2 ? 500 : 200))
    const queued = await owner.post(`/api/teams/${teamId}/webhooks/test`)
    expect(queued.status).toBe(202)
    const received = await receiver.waitFor(3)
    expect(received.map(r => r.id)).toEqual([queued.body.id, queued.body.id, queued.body.id])
    expect(received.map(r => r.verifyError)).toEqual([null, null, null])
    expect(received.map(r => r.body)).toEqual([received[0]!.body, received[0]!.body, received[0]!.body])
    expect(received[0]!.payload!.type).toBe('webhook.test')
    // each retry waits for its delay (jitter is within 10 %)
    expect(received[1]!.receivedAt - received[0]!.receivedAt).toBeGreaterThanOrEqual(schedule[0]! * 900)
    expect(received[2]!.receivedAt - received[1]!.receivedAt).toBeGreaterThanOrEqual(schedule[1]! * 900)
    expect(await waitForDelivery(queued.body.id, 'succeeded')).toEqual({ status: 'succeeded', attempts: 3, last_status_code: 200 })
    expect(await attemptsOf(queued.body.id)).toEqual([
      { attempt: 1, status_code: 500, error: 'The receiver answered 500' },
      { attempt: 2, status_code: 500, error: 'The receiver answered 500' },
      { attempt: 3, status_code: 200, error: null },
    ])
    await afterLaterDelivery(owner, teamId, receiver)
    expect(receiver.received.filter(r => r.id === queued.body.id)).toHaveLength(3)
  })

  it('retries a receiver that never answers on schedule, each attempt cut at the timeout, then gives up', async () => {
    const { owner, teamId, receiver } = await teamWithReceiver(() => 'hang')
    const queued = await owner.post(`/api/teams/${teamId}/webhooks/test`)
    const received = await receiver.waitFor(1 + schedule.length, 30_000)
    expect(received.map(r => r.id)).toEqual(Array(4).fill(queued.body.id))
    const row = await waitForDelivery(queued.body.id, 'failed')
    expect(row).toEqual({ status: 'failed', attempts: 4, last_status_code: null })
    // the schedule on the worker's own record (the receiver's arrival times also carry the local
    // connection's varying latency): each attempt is cut at the timeout, and the next one starts
    // its delay (less at most 10 % of jitter) after the failure was recorded
    const { rows: timeline } = await app.db.query<{ duration_ms: number, ended: number, started: number }>(
      `select duration_ms, extract(epoch from created_at) * 1000 as ended,
              extract(epoch from created_at) * 1000 - duration_ms as started
       from public.webhook_attempts where delivery_id = $1 order by attempt`,
      [queued.body.id],
    )
    for (const [i, attempt] of timeline.entries()) {
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(timeoutMs - 5)
      if (i > 0) expect(Number(attempt.started) - Number(timeline[i - 1]!.ended)).toBeGreaterThanOrEqual(schedule[i - 1]! * 900 - 5)
    }
    const attempts = await attemptsOf(queued.body.id)
    expect(attempts.map(a => a.error)).toEqual(Array(4).fill('No answer within 1 s'))
    receiver.behaviour = () => 200
    await afterLaterDelivery(owner, teamId, receiver)
    expect(receiver.received.filter(r => r.id === queued.body.id)).toHaveLength(4)
  })

  it('stops at 410 Gone', async () => {
    const { owner, teamId, receiver } = await teamWithReceiver(() => 410)
    const queued = await owner.post(`/api/teams/${teamId}/webhooks/test`)
    expect(await waitForDelivery(queued.body.id, 'failed')).toEqual({ status: 'failed', attempts: 1, last_status_code: 410 })
    receiver.behaviour = () => 200
    await afterLaterDelivery(owner, teamId, receiver)
    expect(receiver.received.filter(r => r.id === queued.body.id)).toHaveLength(1)
  })

  it('resends a delivery with the same webhook-id and body, signed with the current secret', async () => {
    const { owner, teamId, receiver } = await teamWithReceiver()
    const queued = await owner.post(`/api/teams/${teamId}/webhooks/test`)
    await waitForDelivery(queued.body.id, 'succeeded')
    receiver.secret = (await owner.post(`/api/teams/${teamId}/webhooks/secret/rotate`)).body.secret
    const resent = await owner.post(`/api/teams/${teamId}/webhooks/deliveries/${queued.body.id}/resend`)
    expect(resent.status).toBe(202)
    const received = await receiver.waitFor(2)
    expect(received[1]!.id).toBe(queued.body.id)
    expect(received[1]!.body).toBe(received[0]!.body)
    expect(received[1]!.verifyError).toBeNull()
    expect(await waitForDelivery(queued.body.id, 'succeeded')).toMatchObject({ attempts: 2 })
    expect((await owner.post(`/api/teams/${teamId}/webhooks/deliveries/00000000-0000-4000-8000-000000000000/resend`)).status).toBe(404)
    // a delivery of another team cannot be found
    expect((await fx.owner.post(`/api/teams/${fx.teamId}/webhooks/deliveries/${queued.body.id}/resend`)).status).toBe(404)
  })
})

describe('SSRF guard', () => {
  it('refuses private webhook URLs when private networks are not allowed, at save time and at connect time', async () => {
    const { owner, teamId, receiver } = await teamWithReceiver()
    await app.restart({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' })
    try {
      for (const url of ['http://127.0.0.1:8080/hook', 'http://10.0.0.1/hook', 'http://[::1]/hook', 'http://localhost:3000/hook', 'http://169.254.169.254/latest']) {
        const answer = await owner.patch(`/api/teams/${teamId}`, { webhook_url: url })
        expect(answer.status, url).toBe(400)
        expect(answer.body.error, url).toMatch(/^webhook_url: .*private/)
      }
      const { rows } = await app.db.query('select webhook_url from public.teams where id = $1', [teamId])
      expect(rows[0].webhook_url).toBe(receiver.url)
      expect((await owner.patch(`/api/teams/${teamId}`, { webhook_url: 'https://hooks.example.com/in' })).status).toBe(200)
      await owner.patch(`/api/teams/${teamId}`, { webhook_url: receiver.url }).then(a => expect(a.status).toBe(400))
      // the URL saved while private networks were allowed is refused when connecting
      await app.db.query('update public.teams set webhook_url = $2 where id = $1', [teamId, receiver.url])
      const queued = await owner.post(`/api/teams/${teamId}/webhooks/test`)
      expect(queued.status).toBe(202)
      const deadline = Date.now() + 10_000
      while ((await attemptsOf(queued.body.id)).length === 0 && Date.now() < deadline) await new Promise(r => setTimeout(r, 100))
      const [attempt] = await attemptsOf(queued.body.id)
      expect(attempt).toMatchObject({ attempt: 1, status_code: null, error: expect.stringMatching(/private address/) })
      expect(receiver.received).toHaveLength(0)
    }
    finally {
      await app.restart({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
    }
  })

  it('accepts private webhook URLs when private networks are allowed', async () => {
    for (const url of ['http://127.0.0.1:8080/hook', 'http://10.0.0.1/hook']) {
      expect((await fx.owner.patch(`/api/teams/${fx.teamId}`, { webhook_url: url })).status).toBe(200)
    }
    await fx.owner.patch(`/api/teams/${fx.teamId}`, { webhook_url: null })
  })
})

describe('restarts', () => {
  it('loses nothing when the app restarts between attempts', async () => {
    const { owner, teamId, receiver } = await teamWithReceiver(index => (index === 0 ? 503 : 200))
    // a first retry far enough out that the restart happens before it
    await app.restart({ WEBHOOK_RETRY_SCHEDULE: '4,1' })
    try {
      const queued = await owner.post(`/api/teams/${teamId}/webhooks/test`)
      await receiver.waitFor(1)
      const deadline = Date.now() + 5000
      while ((await attemptsOf(queued.body.id)).length === 0 && Date.now() < deadline) await new Promise(r => setTimeout(r, 50))
      expect(await deliveryRow(queued.body.id)).toEqual({ status: 'pending', attempts: 1, last_status_code: 503 })
      const restartedAt = Date.now()
      await app.restart()
      const received = await receiver.waitFor(2)
      expect(received.map(r => r.id)).toEqual([queued.body.id, queued.body.id])
      expect(received[1]!.receivedAt).toBeGreaterThan(restartedAt)
      expect(received[1]!.verifyError).toBeNull()
      expect(await waitForDelivery(queued.body.id, 'succeeded')).toEqual({ status: 'succeeded', attempts: 2, last_status_code: 200 })
    }
    finally {
      await app.restart({ WEBHOOK_RETRY_SCHEDULE: schedule.join(',') })
    }
  })

  it('sends after a restart what was queued but not yet sent when the app stopped', async () => {
    const { teamId, receiver } = await teamWithReceiver()
    // a worker that looks at the outbox once at start and then not for ten minutes
    await app.restart({ WEBHOOK_POLL_INTERVAL_MS: '600000' })
    try {
      // its one look at start is over once it says it is running
      await waitFor('the worker to start', () => logLines(app).some(line => line.tag === 'webhooks' && line.message === 'Delivery worker running (polls every 600000 ms)'), { timeoutMs: 20_000 })
      // a delivery that falls due a moment after it is queued: the notification of its commit finds
      // nothing due, and no later one comes, so nothing sends it while this process runs
      const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { team_id: teamId } })
      const { rows } = await app.db.query<{ id: string }>(
        `insert into public.webhook_deliveries (team_id, event, body, next_attempt_at)
         values ($1, 'webhook.test', $2, now() + interval '500 milliseconds') returning id`,
        [teamId, body],
      )
      const queuedId = rows[0]!.id
      await waitFor('the delivery to fall due', async () => {
        const { rows } = await app.db.query('select next_attempt_at <= now() as due from public.webhook_deliveries where id = $1', [queuedId])
        return rows[0].due
      })
      expect(receiver.received).toHaveLength(0)
      expect((await deliveryRow(queuedId)).status).toBe('pending')
      await app.restart({ WEBHOOK_POLL_INTERVAL_MS: '100' })
      const received = await receiver.waitFor(1)
      expect(received[0]!.id).toBe(queuedId)
      expect(received[0]!.verifyError).toBeNull()
    }
    finally {
      await app.restart({ WEBHOOK_POLL_INTERVAL_MS: '100' })
    }
  })
})
