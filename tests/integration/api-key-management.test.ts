import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { appWithTeamForFile } from '../support/file-hooks'
import { KeyClient, type Client, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'
import { startWebhookReceiver } from '../support/webhook-receiver'

// Keys an admin can manage: PUT changes an active key's name, scopes and expiry; a roll links the
// two keys; revoking (or the expiry of) a key disables the webhook endpoints it made.
let app: TestApp
let fx: TeamFixture
appWithTeamForFile({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_MAINTENANCE_INTERVAL_MS: '300' }, (started) => {
  ({ app, team: fx } = started)
})

const keysPath = () => `/api/teams/${fx.teamId}/api-keys`

async function createKey(body: Record<string, unknown> = { name: 'Integration' }, by: Client = fx.owner) {
  const answer = await by.post(keysPath(), body)
  expect(answer.status).toBe(201)
  return answer.body as { id: string, key: string, name: string } & Record<string, unknown>
}

async function keyRow(id: string) {
  const { rows } = await app.db.query('select name, scopes, expires_at, revoked_at, rolled_from from public.api_keys where id = $1', [id])
  return rows[0]
}

describe('PUT /api/teams/{teamId}/api-keys/{keyId}', () => {
  it.each([
    ['owner', 200], ['admin', 200], ['member', 403], ['outsider', 404], ['anonymous', 401],
  ] as const)('as %s answers %i', async (who, status) => {
    const { id } = await createKey({ name: 'Before' })
    const answer = await fx[who].put(`${keysPath()}/${id}`, { name: `Renamed by ${who}` })
    expect(answer.status).toBe(status)
    expect((await keyRow(id)).name).toBe(status === 200 ? `Renamed by ${who}` : 'Before')
  })

  it('renames a key and changes its scopes and expiry, answers the key row and logs the change', async () => {
    const created = await createKey({ name: 'Sync', scopes: { '*': 'write' } })
    const api = new KeyClient(app, created.key)
    expect((await api.get('/api/v1/projects')).status).toBe(200)
    const expiresAt = new Date(Date.now() + 3 * 86_400_000).toISOString()
    const answer = await fx.admin.put(`${keysPath()}/${created.id}`, { name: '  Task sync  ', scopes: { tasks: 'read' }, expires_at: expiresAt })
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({
      id: created.id, name: 'Task sync', scopes: { tasks: 'read' }, expires_at: expiresAt, revoked_at: null,
      created_by_name: 'Olive Owner', rolled_from: null, rolled_to: null, webhook_endpoints: 0,
    })
    expect(answer.body).not.toHaveProperty('key_hash')
    expect(answer.body).not.toHaveProperty('key')
    // in force for the next request
    expect((await api.get('/api/v1/tasks')).status).toBe(200)
    const refused = await api.get('/api/v1/projects')
    expect(refused.status).toBe(403)
    expect((await api.post('/api/v1/tasks', { title: 'No' })).status).toBe(403)
    const { rows } = await app.db.query(
      `select actor_id, source, old_data ->> 'name' as old_name, new_data ->> 'name' as new_name, new_data ? 'key_hash' as has_hash
       from public.activity_log where table_name = 'api_keys' and record_id = $1 and action = 'update'`, [created.id])
    expect(rows).toEqual([{ actor_id: fx.admin.user!.id, source: 'web', old_name: 'Sync', new_name: 'Task sync', has_hash: false }])
  })

  it('changes only what it is given; expires_at null means never', async () => {
    const created = await createKey({ name: 'Partial', scopes: { notes: 'write' }, expires_at: new Date(Date.now() + 86_400_000).toISOString() })
    const answer = await fx.owner.put(`${keysPath()}/${created.id}`, { expires_at: null })
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ name: 'Partial', scopes: { notes: 'write' }, expires_at: null })
    const renamed = await fx.owner.put(`${keysPath()}/${created.id}`, { name: 'Notes' })
    expect(renamed.body).toMatchObject({ name: 'Notes', scopes: { notes: 'write' }, expires_at: null })
  })

  it('an expiry moved into the near future stops the key when it comes', async () => {
    const created = await createKey({ name: 'Soon over' })
    const api = new KeyClient(app, created.key)
    expect((await api.get('/api/v1/tasks')).status).toBe(200)
    const answer = await fx.owner.put(`${keysPath()}/${created.id}`, { expires_at: new Date(Date.now() + 1500).toISOString() })
    expect(answer.status).toBe(200)
    const refused = await waitFor('the key to expire', async () => {
      const attempt = await api.get('/api/v1/tasks')
      return attempt.status === 401 && attempt
    })
    expect(refused.body.error).toBe('This API key has expired')
  })

  it('answers 409 for a revoked or expired key and changes nothing', async () => {
    const revoked = await createKey({ name: 'Revoked' })
    await fx.owner.patch(`${keysPath()}/${revoked.id}`)
    const refused = await fx.owner.put(`${keysPath()}/${revoked.id}`, { name: 'Back' })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toBe('This API key is revoked; it can no longer be changed')
    const expired = await createKey({ name: 'Expired' })
    await app.db.query(`update public.api_keys set expires_at = now() - interval '1 second' where id = $1`, [expired.id])
    const late = await fx.owner.put(`${keysPath()}/${expired.id}`, { expires_at: null })
    expect(late.status).toBe(409)
    expect(late.body.error).toBe('This API key is expired; it can no longer be changed')
    expect((await keyRow(revoked.id)).name).toBe('Revoked')
    expect((await keyRow(expired.id)).expires_at).not.toBeNull()
  })

  it.each([
    [{ name: '  ' }, /^name: /],
    [{ name: 'x'.repeat(101) }, /^name: /],
    [{ scopes: { nope: 'read' } }, /^scopes\.nope: is not a table of the public API$/],
    [{ scopes: { tasks: 'admin' } }, /^scopes\.tasks: must be "read" or "write"$/],
    [{ scopes: {} }, /^scopes: must give access to at least one table$/],
    [{ expires_at: '2020-01-01T00:00:00Z' }, /^expires_at: must lie in the future$/],
    [{ expires_at: 'tomorrow' }, /^expires_at: /],
    [{ revoked_at: null }, /revoked_at/],
  ])('answers 400 for %j and writes nothing', async (body, message) => {
    const created = await createKey({ name: 'Unchanged', scopes: { tasks: 'write' } })
    const answer = await fx.owner.put(`${keysPath()}/${created.id}`, body)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
    expect(await keyRow(created.id)).toMatchObject({ name: 'Unchanged', scopes: { tasks: 'write' }, expires_at: null, revoked_at: null })
  })

  it('answers 404 for another team\'s key', async () => {
    const outsiderTeam = (await fx.outsider.post('/api/teams', { name: 'Other keys' })).body.id
    const foreign = await fx.outsider.post(`/api/teams/${outsiderTeam}/api-keys`, { name: 'Theirs' })
    expect((await fx.owner.put(`${keysPath()}/${foreign.body.id}`, { name: 'Mine' })).status).toBe(404)
    expect((await keyRow(foreign.body.id)).name).toBe('Theirs')
  })
})

describe('rolled keys', () => {
  it('carry rolled_from and rolled_to, and a key is rolled once', async () => {
    const old = await createKey({ name: 'Chain' })
    const rolled = await fx.owner.post(`${keysPath()}/${old.id}/roll`, { expires_in_seconds: 3600 })
    expect(rolled.status).toBe(201)
    expect(rolled.body).toMatchObject({ rolled_from: old.id, rolled_to: null })
    const list = (await fx.owner.get(keysPath())).body as { id: string, rolled_from: string | null, rolled_to: string | null }[]
    expect(list.find(key => key.id === old.id)).toMatchObject({ rolled_from: null, rolled_to: rolled.body.id })
    expect(list.find(key => key.id === rolled.body.id)).toMatchObject({ rolled_from: old.id, rolled_to: null })
    // the old key still works during its overlap, but its replacement is the one to roll
    const again = await fx.owner.post(`${keysPath()}/${old.id}/roll`)
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('This API key was already rolled; roll its replacement instead')
    const next = await fx.owner.post(`${keysPath()}/${rolled.body.id}/roll`)
    expect(next.status).toBe(201)
    expect(next.body.rolled_from).toBe(rolled.body.id)
  })
})

describe('revoking a key disables the webhook endpoints it made', () => {
  async function keyWithEndpoint(name: string) {
    const created = await createKey({ name, scopes: { '*': 'read', 'webhooks': 'write' } })
    const api = new KeyClient(app, created.key)
    const subscribed = await api.post('/api/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hook', events: ['tasks.created'] })
    expect(subscribed.status).toBe(201)
    return { key: created, endpointId: subscribed.body.id as string }
  }
  const endpointRow = async (id: string) => (await app.db.query('select enabled, disabled_reason from public.webhook_endpoints where id = $1', [id])).rows[0]

  it('answers disabled_endpoints, gives the reason, leaves other endpoints alone, and an admin can enable one again', async () => {
    const { key, endpointId } = await keyWithEndpoint('Zapier')
    const second = await new KeyClient(app, key.key).post('/api/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/other', events: ['*'] })
    const bySession = await fx.owner.post(`/api/teams/${fx.teamId}/webhooks/endpoints`, { url: 'http://127.0.0.1:9/mine', events: ['*'] })
    const other = await keyWithEndpoint('Make')
    const answer = await fx.admin.patch(`${keysPath()}/${key.id}`)
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ id: key.id, revoked_at: expect.any(String), disabled_endpoints: 2 })
    const reason = 'Disabled because the API key "Zapier" that created it was revoked'
    expect(await endpointRow(endpointId)).toEqual({ enabled: false, disabled_reason: reason })
    expect(await endpointRow(second.body.id)).toEqual({ enabled: false, disabled_reason: reason })
    expect(await endpointRow(bySession.body.id)).toEqual({ enabled: true, disabled_reason: null })
    expect(await endpointRow(other.endpointId)).toEqual({ enabled: true, disabled_reason: null })
    // the browser's list shows the reason
    const listed = (await fx.owner.get(`/api/teams/${fx.teamId}/webhooks/endpoints`)).body as { id: string, disabled_reason: string | null }[]
    expect(listed.find(endpoint => endpoint.id === endpointId)?.disabled_reason).toBe(reason)
    // a disabled endpoint gets no events
    await fx.owner.post(`/api/teams/${fx.teamId}/records/tasks`, { title: 'After the revoke' })
    const { rows: queued } = await app.db.query('select count(*)::int as n from public.webhook_deliveries where endpoint_id = $1', [endpointId])
    expect(queued[0].n).toBe(0)
    // enabled again by an admin, it stays enabled (the expiry job leaves revoked keys' endpoints alone)
    const enabled = await fx.admin.patch(`/api/teams/${fx.teamId}/webhooks/endpoints/${endpointId}`, { enabled: true })
    expect(enabled.status).toBe(200)
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null })
    await fx.owner.post(`/api/teams/${fx.teamId}/records/tasks`, { title: 'Enabled again' })
    await waitFor('a delivery queued for the enabled endpoint', async () =>
      (await app.db.query('select 1 from public.webhook_deliveries where endpoint_id = $1', [endpointId])).rowCount)
    expect(await endpointRow(endpointId)).toMatchObject({ enabled: true })
  })

  it('a delivery in flight when the key is revoked ends failed, as its queued ones do, not queued for a retry', async () => {
    let answer!: (status: number) => void
    const answered = new Promise<number>((resolve) => {
      answer = resolve
    })
    const receiver = await startWebhookReceiver(() => answered)
    try {
      const created = await createKey({ name: 'In flight', scopes: { '*': 'read', 'webhooks': 'write' } })
      const api = new KeyClient(app, created.key)
      const endpointId = (await api.post('/api/v1/webhook-endpoints', { url: receiver.url, events: ['tasks.created'] })).body.id as string
      expect((await fx.owner.post(`/api/teams/${fx.teamId}/records/tasks`, { title: 'Sent while revoked' })).status).toBe(201)
      await receiver.waitFor(1)
      expect((await fx.owner.patch(`${keysPath()}/${created.id}`)).body.disabled_endpoints).toBe(1)
      const delivery = async () => (await app.db.query('select status, attempts, last_error from public.webhook_deliveries where endpoint_id = $1', [endpointId])).rows
      // the revoke found it in flight: nothing queued to stop
      expect(await delivery()).toEqual([expect.objectContaining({ status: 'delivering', attempts: 0 })])
      answer(500)
      await waitFor('the attempt to be recorded', async () => (await delivery())[0]?.attempts === 1)
      expect(await delivery()).toEqual([{ status: 'failed', attempts: 1, last_error: 'The endpoint was disabled' }])
    }
    finally {
      await receiver.close()
    }
  })

  it('a key without endpoints answers disabled_endpoints 0', async () => {
    const key = await createKey({ name: 'Plain' })
    const answer = await fx.owner.patch(`${keysPath()}/${key.id}`)
    expect(answer.body.disabled_endpoints).toBe(0)
  })

  it('a key\'s expiry disables its endpoints, once', async () => {
    const { key, endpointId } = await keyWithEndpoint('Expiring hooks')
    await app.db.query(`update public.api_keys set expires_at = now() where id = $1`, [key.id])
    const reason = 'Disabled because the API key "Expiring hooks" that created it expired'
    await waitFor('the expired key\'s endpoint to be disabled', async () => (await endpointRow(endpointId)).enabled === false)
    expect(await endpointRow(endpointId)).toEqual({ enabled: false, disabled_reason: reason })
    // enabled again after the expiry, the next runs of the job leave it enabled
    expect((await fx.owner.patch(`/api/teams/${fx.teamId}/webhooks/endpoints/${endpointId}`, { enabled: true })).status).toBe(200)
    const { rows: [before] } = await app.db.query('select count(*)::int as n from public.activity_log where table_name = $1 and record_id = $2', ['webhook_endpoints', endpointId])
    const marker = await createKey({ name: 'Marker', scopes: { '*': 'read', 'webhooks': 'write' } })
    const markerEndpoint = (await new KeyClient(app, marker.key).post('/api/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/marker', events: ['*'] })).body.id
    await app.db.query(`update public.api_keys set expires_at = now() where id = $1`, [marker.id])
    // the job ran again once the marker's endpoint is disabled
    await waitFor('the job to run again', async () => (await endpointRow(markerEndpoint)).enabled === false)
    expect(await endpointRow(endpointId)).toEqual({ enabled: true, disabled_reason: null })
    const { rows: [after] } = await app.db.query('select count(*)::int as n from public.activity_log where table_name = $1 and record_id = $2', ['webhook_endpoints', endpointId])
    expect(after.n).toBe(before.n)
  })
})
