import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, createTeam, signUp, uniqueEmail } from '../support/http'
import { startRoundRobinProxy, type RoundRobinProxy } from '../support/proxy'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'
import { waitFor } from '../support/wait'

// Two app processes on one Postgres database behind a round-robin proxy, as a load balancer
// would run them: whichever process answers, sessions, keys and webhooks behave as with one.
let first: TestApp
let second: TestApp
let proxy: RoundRobinProxy
let receiver: WebhookReceiver
const webhookEnv = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' }
beforeAll(async () => {
  receiver = await startWebhookReceiver(() => 200, { delayMs: 50 })
  first = await startApp(webhookEnv)
  second = await startApp(webhookEnv, { databaseUrl: first.databaseUrl })
  proxy = await startRoundRobinProxy([first.url, second.url])
})
afterAll(async () => {
  await proxy?.close()
  await second?.stop()
  await first?.stop()
  await receiver?.close()
})

describe('two app processes behind a round-robin proxy', () => {
  it('serve the same sessions: signed in through one, the cookie works on the other', async () => {
    const viaProxy = await signUp(proxy, { name: 'Paula Proxy' })
    const servedBefore = proxy.served.length
    for (let i = 0; i < 4; i++) {
      const me = await viaProxy.get('/api/auth/me')
      expect(me.status).toBe(200)
      expect(me.body.user.id).toBe(viaProxy.user!.id)
    }
    // the four requests alternated between both processes
    expect(new Set(proxy.served.slice(servedBefore))).toEqual(new Set([0, 1]))
    // and directly: a session made by the first process is valid on the second
    const onFirst = await signUp(first, { name: 'Fred First' })
    const onSecond = new Client(second)
    onSecond.cookie = onFirst.cookie
    expect((await onSecond.get('/api/auth/me')).body.user.id).toBe(onFirst.user!.id)
    // signing out on the first process ends the session on the second at once
    expect((await onFirst.post('/api/auth/logout')).status).toBe(204)
    expect((await onSecond.get('/api/auth/me')).status).toBe(401)
  })

  it('serve the same keys: a key created on one works on the other, and its revocation too', async () => {
    const owner = await signUp(first, { name: 'Kate Keys' })
    const teamId = await createTeam(owner, 'Keys Team')
    const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'shared' })
    expect(created.status).toBe(201)
    const auth = { authorization: `Bearer ${created.body.key}` }
    const onSecond = new Client(second)
    const note = await onSecond.post('/api/v1/notes', { title: 'written on the second' }, auth)
    expect(note.status).toBe(201)
    const viaProxy = new Client(proxy)
    for (let i = 0; i < 4; i++) {
      const read = await viaProxy.get(`/api/v1/notes/${note.body.id}`, auth)
      expect(read.status).toBe(200)
      expect(read.body.title).toBe('written on the second')
    }
    expect((await owner.patch(`/api/teams/${teamId}/api-keys/${created.body.id}`, { revoked: true })).status).toBe(200)
    // the process that revoked it refuses it at once; the other one once the revocation's
    // notification has reached it (within 100 ms by the key bounds, 5 s without notifications;
    // bench:revocation measures how soon), and from then on it never serves it again
    expect((await new Client(first).get('/api/v1/notes', auth)).status).toBe(401)
    await waitFor('the second process to refuse the revoked key',
      async () => (await onSecond.get('/api/v1/notes', auth)).status === 401, { timeoutMs: 5_000, intervalMs: 0 })
    for (let i = 0; i < 5; i++) expect((await onSecond.get('/api/v1/notes', auth)).status).toBe(401)
  })

  it('deliver each webhook once, whichever process queued it', async () => {
    const owner = await signUp(proxy, { name: 'Wes Webhooks' })
    const teamId = await createTeam(owner, 'Hooks Team')
    expect((await owner.patch(`/api/teams/${teamId}`, { webhook_url: receiver.url })).status).toBe(200)
    receiver.secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
    const invitations = await Promise.all(Array.from({ length: 20 }, () =>
      owner.post(`/api/teams/${teamId}/invitations`, { email: uniqueEmail('hook'), role: 'member' })))
    expect(invitations.map(i => i.status)).toEqual(Array(20).fill(201))
    const deadline = Date.now() + 30_000
    while ((await first.db.query(`select 1 from public.webhook_deliveries where team_id = $1 and status <> 'succeeded'`, [teamId])).rowCount) {
      if (Date.now() > deadline) throw new Error('the deliveries did not all succeed within 30 s')
      await new Promise(r => setTimeout(r, 50))
    }
    const { rows } = await first.db.query<{ id: string }>('select id from public.webhook_deliveries where team_id = $1', [teamId])
    expect(rows).toHaveLength(20)
    const received = receiver.received.filter(r => r.payload?.data.team_id === teamId)
    expect(received.map(r => r.id).sort()).toEqual(rows.map(r => r.id).sort())
    const { rows: attempts } = await first.db.query<{ n: number }>(
      'select count(*)::int as n from public.webhook_attempts where team_id = $1', [teamId])
    expect(attempts[0]!.n).toBe(20)
  })
})
