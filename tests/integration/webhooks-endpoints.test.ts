import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { webhookAppForFile } from '../support/file-hooks'
import { keyClientFor, signUp, type Client, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'
import { teamWithSecret } from '../support/webhook-receiver'

let app: TestApp
let fx: TeamFixture
// Receivers on 127.0.0.1, two quick retries (1 s, 1 s), a 1 s timeout, a fast poll and a fast auto-disable job.
const receiverFor = webhookAppForFile({ WEBHOOK_RETRY_SCHEDULE: '1,1', WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_MAINTENANCE_INTERVAL_MS: '300' }, (started) => {
  ({ app, team: fx } = started)
})

/** A fresh team with its owner, an API key and the team's secret. */
async function newTeam() {
  const team = await teamWithSecret(app, { owner: 'Hook Owner', team: 'Hook Team' })
  return { ...team, api: await keyClientFor(app, team, 'hooks') }
}

async function addEndpoint(owner: Client, teamId: string, url: string, events: string[], enabled = true) {
  const answer = await owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url, events, enabled, description: events.join(' ') })
  expect(answer.status).toBe(201)
  return answer.body.id as string
}

async function deliveryCount(teamId: string) {
  const { rows } = await app.db.query('select count(*)::int as n from public.webhook_deliveries where team_id = $1', [teamId])
  return rows[0].n as number
}

/** Waits until every delivery of the team is done (succeeded or failed). */
async function allSettled(teamId: string) {
  await waitFor('every delivery to settle', async () => {
    const { rows } = await app.db.query(`select count(*)::int as n from public.webhook_deliveries where team_id = $1 and status in ('pending', 'delivering')`, [teamId])
    return rows[0].n === 0
  }, { timeoutMs: 20_000 })
}

describe('webhook endpoint routes', () => {
  it('let owners and admins manage endpoints; members get 403, outsiders 404, signed-out callers 401', async () => {
    const base = `/api/teams/${fx.teamId}/webhooks/endpoints`
    const created = await fx.admin.post(base, { url: 'http://127.0.0.1:9/hook', events: ['*'] })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ url: 'http://127.0.0.1:9/hook', events: ['*'], enabled: true, disabled_reason: null })
    const id = created.body.id
    expect((await fx.owner.get(base)).body.map((endpoint: { id: string }) => endpoint.id)).toContain(id)
    for (const [client, status] of [[fx.member, 403], [fx.outsider, 404], [fx.anonymous, 401]] as const) {
      expect((await client.get(base)).status).toBe(status)
      expect((await client.post(base, { url: 'http://127.0.0.1:9/x', events: ['*'] })).status).toBe(status)
      expect((await client.patch(`${base}/${id}`, { enabled: false })).status).toBe(status)
      expect((await client.delete(`${base}/${id}`)).status).toBe(status)
      expect((await client.post(`${base}/${id}/recover`, { since: '2026-01-01T00:00:00Z' })).status).toBe(status)
      expect((await client.post(`${base}/${id}/test`)).status).toBe(status)
      expect((await client.get(`${base}/${id}/deliveries`)).status).toBe(status)
    }
    // an outsider's team id cannot reach this endpoint either
    const outsiderTeam = (await fx.outsider.post('/api/teams', { name: 'Elsewhere' })).body.id
    expect((await fx.outsider.patch(`/api/teams/${outsiderTeam}/webhooks/endpoints/${id}`, { enabled: false })).status).toBe(404)
    expect((await fx.owner.delete(`${base}/${id}`)).status).toBe(204)
    expect((await fx.owner.delete(`${base}/${id}`)).status).toBe(404)
  })

  it('offers the invitation events and three events per domain table, and refuses anything else with a 400 naming it', async () => {
    const types = (await fx.owner.get(`/api/teams/${fx.teamId}/webhooks/event-types`)).body.event_types as string[]
    expect(types).toEqual(expect.arrayContaining(['invitation.created', 'invitation.accepted', 'invitation.revoked',
      'projects.created', 'projects.updated', 'projects.deleted', 'tasks.created', 'tasks.updated', 'tasks.deleted', 'notes.deleted']))
    expect(types.some(type => type.startsWith('api_keys.') || type.startsWith('teams.') || type.startsWith('webhook_'))).toBe(false)

    const base = `/api/teams/${fx.teamId}/webhooks/endpoints`
    const before = (await fx.owner.get(base)).body.length
    const bad = [
      [{ url: 'http://127.0.0.1:9/x', events: ['tasks.exploded'] }, 'events: unknown event type "tasks.exploded"'],
      [{ url: 'http://127.0.0.1:9/x', events: ['api_keys.created'] }, 'events: unknown event type "api_keys.created"'],
      [{ url: 'http://127.0.0.1:9/x', events: [] }, 'events: must name at least one event type'],
      [{ url: 'ftp://127.0.0.1/x', events: ['*'] }, 'url: must be an http or https URL'],
      [{ events: ['*'] }, 'url:'],
    ] as const
    for (const [body, message] of bad) {
      const answer = await fx.owner.post(base, body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(answer.body.error).toContain(message)
    }
    expect((await fx.owner.post(`${base}/00000000-0000-4000-8000-000000000000/recover`, { since: '2026-01-01T00:00:00Z' })).status).toBe(404)
    expect((await fx.owner.get(base)).body.length).toBe(before)
  })

  it('refuses private addresses when private networks are not allowed', async () => {
    const strict = await startApp({ WEBHOOK_POLL_INTERVAL_MS: '100' })
    try {
      const owner = await signUp(strict, { name: 'Strict' })
      const teamId = (await owner.post('/api/teams', { name: 'Strict' })).body.id
      const answer = await owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url: 'http://127.0.0.1:9/hook', events: ['*'] })
      expect(answer.status).toBe(400)
      expect(answer.body.error).toMatch(/^url: /)
    }
    finally {
      await strict.stop()
    }
  }, 180_000)
})

describe('record events', () => {
  it('deliver created, updated (with previous) and deleted to the endpoints subscribed to them, from session and key writes', async () => {
    const team = await newTeam()
    const [tasksOnly, projectsCreated, everything, disabled] = await Promise.all([1, 2, 3, 4].map(() => receiverFor(team.secret)))
    await addEndpoint(team.owner, team.teamId, tasksOnly!.url, ['tasks.created', 'tasks.updated', 'tasks.deleted'])
    await addEndpoint(team.owner, team.teamId, projectsCreated!.url, ['projects.created'])
    await addEndpoint(team.owner, team.teamId, everything!.url, ['*'])
    await addEndpoint(team.owner, team.teamId, disabled!.url, ['*'], false)

    // a browser-session write, then key writes
    const project = await team.owner.post(`/api/teams/${team.teamId}/records/projects`, { name: 'Apollo' })
    expect(project.status).toBe(201)
    const task = await team.api.post('/api/v1/tasks', { title: 'Launch', project_id: project.body.id })
    expect(task.status).toBe(201)
    const updated = await team.api.patch(`/api/v1/tasks/${task.body.id}`, { title: 'Launch v2', priority: 1 })
    expect(updated.status).toBe(200)
    expect((await team.owner.delete(`/api/teams/${team.teamId}/records/tasks/${task.body.id}`)).status).toBe(204)

    await everything!.waitFor(4)
    await tasksOnly!.waitFor(3)
    await projectsCreated!.waitFor(1)
    await allSettled(team.teamId)

    for (const receiver of [tasksOnly!, projectsCreated!, everything!]) {
      expect(receiver.received.every(delivery => delivery.verifyError === null)).toBe(true)
    }
    expect(everything!.received.map(delivery => delivery.payload!.type)).toEqual(['projects.created', 'tasks.created', 'tasks.updated', 'tasks.deleted'])
    expect(tasksOnly!.received.map(delivery => delivery.payload!.type)).toEqual(['tasks.created', 'tasks.updated', 'tasks.deleted'])
    expect(projectsCreated!.received.map(delivery => delivery.payload!.type)).toEqual(['projects.created'])
    expect(disabled!.received).toHaveLength(0)

    const [created, change, deleted] = tasksOnly!.received.map(delivery => delivery.payload!)
    expect(created!.data).toMatchObject({ id: task.body.id, team_id: team.teamId, title: 'Launch', priority: 3, project_id: project.body.id })
    expect(created!.data.previous).toBeUndefined()
    expect(change!.data).toMatchObject({ id: task.body.id, title: 'Launch v2', priority: 1 })
    expect(change!.data.previous).toMatchObject({ title: 'Launch', priority: 3 })
    expect(Object.keys(change!.data.previous)).not.toContain('status')
    expect(deleted!.data).toMatchObject({ id: task.body.id, title: 'Launch v2' })
    expect(Date.parse(created!.timestamp)).not.toBeNaN()
    // each endpoint gets its own delivery (its own webhook-id) of the same event
    expect(new Set([...tasksOnly!.received, ...everything!.received].map(delivery => delivery.id)).size).toBe(7)
  })

  it('deliver one event per row of a write of many rows, each with its own row, and the change feed lists each', async () => {
    const team = await newTeam()
    const receiver = await receiverFor(team.secret)
    await addEndpoint(team.owner, team.teamId, receiver.url, ['tasks.created', 'tasks.deleted'])

    const created = await team.api.post('/api/v1/tasks', [{ title: 'Bulk 1' }, { title: 'Bulk 2', priority: 1 }, { title: 'Bulk 3' }])
    expect(created.status).toBe(201)
    const ids = (created.body as { id: string }[]).map(row => row.id)
    expect(ids).toHaveLength(3)
    const deleted = await team.api.delete(`/api/v1/tasks?id=in.(${ids.join(',')})`)
    expect(deleted.status).toBe(204)

    await receiver.waitFor(6)
    await allSettled(team.teamId)
    expect(receiver.received.every(delivery => delivery.verifyError === null)).toBe(true)
    const payloads = receiver.received.map(delivery => delivery.payload!)
    const byType = (type: string) => payloads.filter(payload => payload.type === type).map(payload => payload.data)
    expect(byType('tasks.created').map(row => row.title).sort()).toEqual(['Bulk 1', 'Bulk 2', 'Bulk 3'])
    expect(byType('tasks.created').find(row => row.title === 'Bulk 2')).toMatchObject({ id: ids[1], team_id: team.teamId, priority: 1 })
    expect(byType('tasks.deleted').map(row => row.id).sort()).toEqual([...ids].sort())
    // timestamps in the API's form, UTC with Z
    for (const row of [...byType('tasks.created'), ...byType('tasks.deleted')]) {
      expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      expect(row.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
    expect(new Set(receiver.received.map(delivery => delivery.id)).size).toBe(6)

    const { rows: events } = await app.db.query<{ type: string, record_id: string, source: string }>(
      `select type, record_id, source from public.record_events where team_id = $1 and table_name = 'tasks' order by xid, id`,
      [team.teamId],
    )
    expect(events.filter(event => event.type === 'tasks.created').map(event => event.record_id)).toEqual(ids)
    expect(events.filter(event => event.type === 'tasks.deleted').map(event => event.record_id).sort()).toEqual([...ids].sort())
    expect(events.every(event => event.source === 'api')).toBe(true)
  })

  it('send invitation events to subscribed endpoints and to the team webhook_url as before', async () => {
    const team = await newTeam()
    const [receiverUrl, invitations, tasks] = await Promise.all([1, 2, 3].map(() => receiverFor(team.secret)))
    expect((await team.owner.patch(`/api/teams/${team.teamId}`, { webhook_url: receiverUrl!.url })).status).toBe(200)
    await addEndpoint(team.owner, team.teamId, invitations!.url, ['invitation.created', 'invitation.revoked'])
    await addEndpoint(team.owner, team.teamId, tasks!.url, ['tasks.created'])
    const invitation = await team.owner.post(`/api/teams/${team.teamId}/invitations`, { email: 'someone@example.com', role: 'member' })
    expect(invitation.status).toBe(201)
    await receiverUrl!.waitFor(1)
    await invitations!.waitFor(1)
    await allSettled(team.teamId)
    expect(receiverUrl!.received[0]!.payload).toMatchObject({ type: 'invitation.created', data: { email: 'someone@example.com' } })
    expect(invitations!.received[0]!.payload).toMatchObject({ type: 'invitation.created', data: { email: 'someone@example.com' } })
    expect(tasks!.received).toHaveLength(0)
    // the webhook_url's delivery list keeps showing only its own deliveries
    const list = (await team.owner.get(`/api/teams/${team.teamId}/webhooks/deliveries`)).body
    expect(list).toHaveLength(1)
  })

  it('queue nothing for a write that fails or rolls back', async () => {
    const team = await newTeam()
    const receiver = await receiverFor(team.secret)
    await addEndpoint(team.owner, team.teamId, receiver.url, ['*'])
    const task = await team.api.post('/api/v1/tasks', { title: 'Kept' })
    await receiver.waitFor(1)
    const count = await deliveryCount(team.teamId)

    // refused by the database (a done task needs completed_at) and by validation
    expect((await team.api.patch(`/api/v1/tasks/${task.body.id}`, { status: 'done', completed_at: null })).status).toBeGreaterThanOrEqual(400)
    expect((await team.api.post('/api/v1/tasks', { title: '' })).status).toBe(400)
    // a transaction that inserts (the trigger queues its event) and then fails: one statement, so that
    // no other statement of the app interleaves on PGlite's single session
    const rolledBack = app.db.query(`do $$
      declare
        before integer;
        after integer;
      begin
        select count(*) into before from public.webhook_deliveries where team_id = '${team.teamId}';
        insert into public.tasks (team_id, created_by, title) select team_id, created_by, 'ghost' from public.tasks where id = '${task.body.id}';
        select count(*) into after from public.webhook_deliveries where team_id = '${team.teamId}';
        if after <> before + 1 then
          raise exception 'the insert queued % deliveries', after - before;
        end if;
        raise exception 'rolled back on purpose';
      end $$`)
    await expect(rolledBack).rejects.toThrow('rolled back on purpose')
    expect(await deliveryCount(team.teamId)).toBe(count)
    // a later committed write is still delivered, and only it
    await team.api.patch(`/api/v1/tasks/${task.body.id}`, { title: 'Kept and renamed' })
    await receiver.waitFor(2)
    await allSettled(team.teamId)
    expect(receiver.received.map(delivery => delivery.payload!.type)).toEqual(['tasks.created', 'tasks.updated'])
  })
})

describe('secrets, answers, recovery and auto-disable', () => {
  it('sign with both secrets for 24 hours after a rotation, each signature verifying on its own', async () => {
    const team = await newTeam()
    const receiver = await receiverFor(team.secret)
    const endpointId = await addEndpoint(team.owner, team.teamId, receiver.url, ['*'])
    const rotated = await team.owner.post(`/api/teams/${team.teamId}/webhooks/secret/rotate`)
    expect(rotated.status).toBe(200)
    const newSecret = rotated.body.secret as string
    expect(newSecret).not.toBe(team.secret)

    expect((await team.owner.post(`/api/teams/${team.teamId}/webhooks/endpoints/${endpointId}/test`)).status).toBe(202)
    const [delivery] = await receiver.waitFor(1)
    const signatures = delivery!.signature.split(' ')
    expect(signatures).toHaveLength(2)
    const headers = { 'webhook-id': delivery!.id, 'webhook-timestamp': delivery!.timestamp }
    for (const secret of [team.secret, newSecret]) {
      // the library accepts the header when one of its signatures matches the secret
      expect(new Webhook(secret).verify(delivery!.body, { ...headers, 'webhook-signature': delivery!.signature })).toMatchObject({ type: 'webhook.test' })
    }
    expect(() => new Webhook(team.secret).verify(delivery!.body, { ...headers, 'webhook-signature': signatures[0]! })).toThrow()
    expect(new Webhook(newSecret).verify(delivery!.body, { ...headers, 'webhook-signature': signatures[0]! })).toBeTruthy()
    expect(new Webhook(team.secret).verify(delivery!.body, { ...headers, 'webhook-signature': signatures[1]! })).toBeTruthy()

    // 24 hours later (moved in the database) only the new secret signs
    await app.db.query(`update public.webhook_secrets set previous_expires_at = now() - interval '1 second' where team_id = $1`, [team.teamId])
    await team.api.post('/api/v1/notes', { title: 'After the overlap' })
    const later = (await receiver.waitFor(2))[1]!
    expect(later.signature.split(' ')).toHaveLength(1)
    expect(new Webhook(newSecret).verify(later.body, { 'webhook-id': later.id, 'webhook-timestamp': later.timestamp, 'webhook-signature': later.signature })).toMatchObject({ type: 'notes.created' })
  })

  it('keep each attempt with its status, duration and the first 4 KiB of the answer; recover requeues the failed deliveries since a time', async () => {
    const team = await newTeam()
    let isDown = true
    const longAnswer = `${'x'.repeat(4090)}END-OF-KEPT-PART${'y'.repeat(1000)}`
    const receiver = await receiverFor(team.secret, () => (isDown ? { status: 503, body: longAnswer } : 200))
    const endpointId = await addEndpoint(team.owner, team.teamId, receiver.url, ['tasks.created'])
    const base = `/api/teams/${team.teamId}/webhooks/endpoints/${endpointId}`
    const startedAt = new Date(Date.now() - 1000).toISOString()
    await team.api.post('/api/v1/tasks', { title: 'One' })
    await team.api.post('/api/v1/tasks', { title: 'Two' })
    // three attempts each (first try + two retries), then failed
    await receiver.waitFor(6)
    await allSettled(team.teamId)
    const deliveries = (await team.owner.get(`${base}/deliveries`)).body
    expect(deliveries).toHaveLength(2)
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({ status: 'failed', attempts: 3, last_status_code: 503 })
      expect(delivery.attempts_list).toHaveLength(3)
      for (const attempt of delivery.attempts_list) {
        expect(attempt.status_code).toBe(503)
        expect(attempt.duration_ms).toBeGreaterThanOrEqual(0)
        expect(attempt.response_body).toHaveLength(4096)
        expect(attempt.response_body).toBe(longAnswer.slice(0, 4096))
      }
    }

    isDown = false
    const recovered = await team.owner.post(`${base}/recover`, { since: startedAt })
    expect(recovered.status).toBe(202)
    expect(recovered.body).toEqual({ queued: 2 })
    await receiver.waitFor(8)
    await allSettled(team.teamId)
    const after = (await team.owner.get(`${base}/deliveries`)).body
    expect(after.map((delivery: { status: string }) => delivery.status)).toEqual(['succeeded', 'succeeded'])
    // the same webhook-ids as the failed attempts, so receivers can tell a redelivery
    const ids = receiver.received.map(delivery => delivery.id)
    expect(new Set(ids).size).toBe(2)
    expect(after[0].attempts_list.at(-1)).toMatchObject({ status_code: 200, response_body: 'ok' })

    // nothing failed after a later `since`; a malformed one is a 400
    expect((await team.owner.post(`${base}/recover`, { since: new Date().toISOString() })).body).toEqual({ queued: 0 })
    const malformed = await team.owner.post(`${base}/recover`, { since: 'last tuesday' })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error).toContain('since:')
  })

  it('disable an endpoint that has failed every attempt for 5 days, with the reason, and enabling clears it', async () => {
    const team = await newTeam()
    const receiver = await receiverFor(team.secret, () => 500)
    const endpointId = await addEndpoint(team.owner, team.teamId, receiver.url, ['notes.created'])
    await team.api.post('/api/v1/notes', { title: 'Fails' })
    await receiver.waitFor(1)
    const { rows: [row] } = await waitFor('the endpoint to record its failure', async () => {
      const result = await app.db.query('select failing_since from public.webhook_endpoints where id = $1', [endpointId])
      return result.rows[0].failing_since ? result : undefined
    }, { timeoutMs: 20_000 })
    expect(row.failing_since).toBeTruthy()
    const base = `/api/teams/${team.teamId}/webhooks/endpoints`
    // 4 days of failures: still enabled after the job has had time to run several times
    await app.db.query(`update public.webhook_endpoints set failing_since = now() - interval '4 days' where id = $1`, [endpointId])
    await team.api.post('/api/v1/notes', { title: 'Fails again' })
    await receiver.waitFor(2)
    expect((await team.owner.get(base)).body.find((endpoint: { id: string }) => endpoint.id === endpointId).enabled).toBe(true)

    // the clock moved: the first failure was 5 days and a minute ago
    await app.db.query(`update public.webhook_endpoints set failing_since = now() - interval '5 days 1 minute' where id = $1`, [endpointId])
    const disabled = await waitFor('the endpoint to be disabled', async () => {
      const endpoint = (await team.owner.get(base)).body.find((item: { id: string }) => item.id === endpointId)
      return endpoint.enabled ? undefined : endpoint
    }, { timeoutMs: 20_000 })
    expect(disabled.disabled_reason).toMatch(/every delivery attempt failed for 5 days/)
    expect(disabled.disabled_reason).toContain('500')
    expect(disabled.disabled_at).toBeTruthy()
    // its queued deliveries stop, and new writes queue nothing for it
    await allSettled(team.teamId)
    const count = await deliveryCount(team.teamId)
    await team.api.post('/api/v1/notes', { title: 'While disabled' })
    expect(await deliveryCount(team.teamId)).toBe(count)
    expect((await team.owner.post(`${base}/${endpointId}/test`)).status).toBe(409)

    const enabled = await team.owner.patch(`${base}/${endpointId}`, { enabled: true })
    expect(enabled.status).toBe(200)
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null })
    const byHand = await team.owner.patch(`${base}/${endpointId}`, { enabled: false })
    expect(byHand.body).toMatchObject({ enabled: false, disabled_reason: 'Disabled by Hook Owner' })
  })
})
