import { enrolTotp } from '../support/factors'
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js'
import WebSocket from 'ws'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { openEventStream, type OpenStream } from '../support/event-stream'
import { KeyClient, teamWithRoles, type Client, type TeamFixture } from '../support/http'
import { connectApp } from '../support/oauth'
import { waitFor } from '../support/wait'

// A team's two-factor policy, on every door: the session routes, the keys a non-compliant member
// made (/api/v1, /rest/v1, /mcp, the event stream, the realtime socket) and the OAuth grants they
// gave (/mcp). Members enrol an authenticator app through the account's routes, with codes
// computed from the secret; on Postgres the new factor notifies every instance.
let app: TestApp
beforeAll(async () => {
  app = await startApp({ CHANGES_HEARTBEAT_MS: '300' })
})
afterAll(async () => {
  await app?.stop()
})

const streams: OpenStream[] = []
const sockets: SupabaseClient[] = []
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close()
  for (const client of sockets.splice(0)) await client.removeAllChannels()
})

/** Enrols an authenticator app through the account's own routes, as the member would. */
async function enrol(user: Client): Promise<void> {
  await enrolTotp(user)
}

async function setPolicy(fx: TeamFixture, require_two_factor: string, grace_days = 0) {
  const answer = await fx.owner.put(`/api/teams/${fx.teamId}/security-policy`, { require_two_factor, grace_days })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body
}

async function keyOf(creator: Client, teamId: string, name = 'Policy'): Promise<KeyClient> {
  const answer = await creator.post(`/api/teams/${teamId}/api-keys`, { name })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return new KeyClient(app, answer.body.key)
}

const mcpPost = (token: string) => fetch(`${app.url}/mcp`, {
  method: 'POST',
  headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
})

const streamHead = (key: string) => fetch(`${app.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key}` } })

/** The status and code of every key door for this key (the stream's answer read as far as its head). */
async function keyDoors(key: KeyClient) {
  const v1 = await key.get('/api/v1/tasks')
  const rest = await key.get('/rest/v1/tasks')
  const mcp = await mcpPost(key.key)
  const stream = await streamHead(key.key)
  // an open stream is closed here; a refusal is read whole
  const streamBody = stream.status === 200 ? await stream.body?.cancel() : await stream.json()
  return {
    v1: [v1.status, v1.body?.code],
    rest: [rest.status, rest.body?.code],
    mcp: [mcp.status, (await mcp.json().catch(() => null))?.code],
    stream: [stream.status, streamBody?.code],
  }
}

const allRefused = { v1: [401, 'two_factor_required'], rest: [401, 'two_factor_required'], mcp: [401, 'two_factor_required'], stream: [401, 'two_factor_required'] }

function supabase(key: string): SupabaseClient {
  const client = createClient(app.url, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    realtime: { transport: WebSocket as never },
  })
  sockets.push(client)
  return client
}

/** Subscribes and resolves with the first status other than CLOSED, and its error. */
function subscribe(channel: RealtimeChannel): Promise<{ status: string, error?: Error }> {
  return new Promise((resolve) => {
    channel.subscribe((status, error) => {
      if (status !== 'CLOSED') resolve({ status, error })
    })
  })
}

describe('GET and PUT /api/teams/{teamId}/security-policy', () => {
  it('answers any member; lists who does not comply, and since when, to owners and admins only', async () => {
    const fx = await teamWithRoles(app)
    const off = await fx.member.get(`/api/teams/${fx.teamId}/security-policy`)
    expect(off.status).toBe(200)
    expect(off.body).toEqual({ require_two_factor: 'off', grace_days: 0, enforced_from: null })

    await enrol(fx.owner)
    const before = Date.now()
    const put = await setPolicy(fx, 'everyone', 2)
    expect(put).toMatchObject({ require_two_factor: 'everyone', grace_days: 2 })
    const enforcedFrom = new Date(put.enforced_from).getTime()
    expect(enforcedFrom).toBeGreaterThan(before + 2 * 86_400_000 - 60_000)
    expect(enforcedFrom).toBeLessThan(Date.now() + 2 * 86_400_000 + 60_000)
    expect(put.non_compliant.map((m: { name: string }) => m.name)).toEqual(['Adam Admin', 'Mia Member'])
    expect(put.non_compliant[0]).toEqual({ user_id: fx.admin.user!.id, name: 'Adam Admin', role: 'admin', since: put.enforced_from })

    const asAdmin = await fx.admin.get(`/api/teams/${fx.teamId}/security-policy`)
    expect(asAdmin.body.non_compliant).toHaveLength(2)
    const asMember = await fx.member.get(`/api/teams/${fx.teamId}/security-policy`)
    expect(asMember.body).toEqual({ require_two_factor: 'everyone', grace_days: 2, enforced_from: put.enforced_from })

    // the activity log records the change, by whom
    const activity = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=teams&action=update&source=web`)
    expect(activity.body.entries[0]).toMatchObject({ actor_name: 'Olive Owner', new_data: expect.objectContaining({ require_two_factor: 'everyone', two_factor_grace_days: 2 }) })
  })

  it('refuses a member and an admin (403), another team (404), an owner without a factor (409), and bad input (400), writing nothing', async () => {
    const fx = await teamWithRoles(app)
    const path = `/api/teams/${fx.teamId}/security-policy`
    expect((await fx.member.put(path, { require_two_factor: 'everyone' })).status).toBe(403)
    expect((await fx.admin.put(path, { require_two_factor: 'off' })).status).toBe(403)
    // the outsider is the owner of another team: this team's policy is not theirs to read or change
    await enrol(fx.outsider)
    expect((await fx.outsider.get(path)).status).toBe(404)
    expect((await fx.outsider.put(path, { require_two_factor: 'everyone' })).status).toBe(404)
    expect((await fx.anonymous.get(path)).status).toBe(401)

    const noFactor = await fx.owner.put(path, { require_two_factor: 'admins' })
    expect(noFactor.status).toBe(409)
    expect(noFactor.body).toMatchObject({ code: 'owner_needs_two_factor', error: expect.stringMatching(/second factor/) })
    expect((await fx.owner.put(path, { require_two_factor: 'all' })).body.error).toMatch(/require_two_factor/)
    await enrol(fx.owner)
    const tooLong = await fx.owner.put(path, { require_two_factor: 'everyone', grace_days: 31 })
    expect(tooLong.status).toBe(400)
    expect(tooLong.body.error).toMatch(/grace_days/)
    expect((await fx.owner.put(path, { require_two_factor: 'everyone', grace_days: 1.5 })).status).toBe(400)
    const { rows } = await app.db.query('select require_two_factor, two_factor_enforced_from from public.teams where id = $1', [fx.teamId])
    expect(rows[0]).toEqual({ require_two_factor: 'off', two_factor_enforced_from: null })
  })
})

describe('a member the policy refuses', () => {
  it('is refused team routes with two_factor_required, but may read the policy and leave; enrolling lets them in', async () => {
    const fx = await teamWithRoles(app)
    await enrol(fx.owner)
    await setPolicy(fx, 'everyone')
    const refused = await fx.member.get(`/api/teams/${fx.teamId}`)
    expect(refused.status).toBe(403)
    expect(refused.body).toEqual({ error: expect.stringMatching(/two-factor/), code: 'two_factor_required' })
    expect((await fx.member.get(`/api/teams/${fx.teamId}/records/tasks`)).body.code).toBe('two_factor_required')
    expect((await fx.admin.get(`/api/teams/${fx.teamId}/members`)).body.code).toBe('two_factor_required')
    expect((await fx.member.get(`/api/teams/${fx.teamId}/security-policy`)).status).toBe(200)
    // the owner, who has a factor, is let in
    expect((await fx.owner.get(`/api/teams/${fx.teamId}`)).status).toBe(200)

    await enrol(fx.member)
    expect((await fx.member.get(`/api/teams/${fx.teamId}/records/tasks`)).status).toBe(200)
    // a refused member may still leave the team
    expect((await fx.admin.get(`/api/teams/${fx.teamId}`)).status).toBe(403)
    expect((await fx.admin.delete(`/api/teams/${fx.teamId}/members/${fx.admin.user!.id}`)).status).toBe(204)
    expect((await fx.admin.get(`/api/teams/${fx.teamId}`)).status).toBe(404)
  })

  it('is let in during the grace period, and "admins" covers owners and admins only', async () => {
    const fx = await teamWithRoles(app)
    await enrol(fx.owner)
    const key = await keyOf(fx.admin, fx.teamId)
    const graced = await setPolicy(fx, 'everyone', 7)
    expect(new Date(graced.enforced_from).getTime()).toBeGreaterThan(Date.now())
    expect((await fx.member.get(`/api/teams/${fx.teamId}`)).status).toBe(200)
    expect(await keyDoors(key)).toEqual({ v1: [200, undefined], rest: [200, undefined], mcp: [200, undefined], stream: [200, undefined] })

    await setPolicy(fx, 'admins')
    expect((await fx.member.get(`/api/teams/${fx.teamId}`)).status).toBe(200)
    expect((await fx.admin.get(`/api/teams/${fx.teamId}`)).body.code).toBe('two_factor_required')
    await waitFor('the admin\'s key to be refused', async () => (await key.get('/api/v1/tasks')).status === 401)
    // a member made admin is covered from then on
    await app.db.query(`update public.team_members set role = 'admin' where team_id = $1 and user_id = $2`, [fx.teamId, fx.member.user!.id])
    expect((await fx.member.get(`/api/teams/${fx.teamId}`)).body.code).toBe('two_factor_required')
    // turning it off lets everyone in again
    await setPolicy(fx, 'off')
    expect((await fx.admin.get(`/api/teams/${fx.teamId}`)).status).toBe(200)
    await waitFor('the admin\'s key to work again', async () => (await key.get('/api/v1/tasks')).status === 200)
  })
})

describe('the keys and grants of a member the policy refuses', () => {
  it('answer 401 two_factor_required on /api/v1, /rest/v1, /mcp and the event stream, and work again once the member enrols', async () => {
    const fx = await teamWithRoles(app)
    await enrol(fx.owner)
    const adminKey = await keyOf(fx.admin, fx.teamId, 'Admin key')
    const ownerKey = await keyOf(fx.owner, fx.teamId, 'Owner key')
    // known to this instance before the policy changes (a cached key must be dropped too)
    expect((await adminKey.get('/api/v1/tasks')).status).toBe(200)
    await setPolicy(fx, 'everyone')
    await waitFor('the admin\'s key to be refused', async () => (await adminKey.get('/api/v1/tasks')).status === 401)
    const refused = await adminKey.get('/api/v1/tasks')
    expect(refused.body).toMatchObject({ code: 'two_factor_required', error: expect.stringMatching(/two-factor/), message: expect.stringMatching(/two-factor/) })
    expect(await keyDoors(adminKey)).toEqual(allRefused)
    // not a revocation: the key is still active
    const listed = await fx.owner.get(`/api/teams/${fx.teamId}/api-keys`)
    expect(listed.body.find((k: { name: string }) => k.name === 'Admin key')).toMatchObject({ revoked_at: null })
    expect((await ownerKey.get('/api/v1/tasks')).status).toBe(200)

    await enrol(fx.admin)
    await waitFor('the admin\'s key to work again', async () => (await adminKey.get('/api/v1/tasks')).status === 200)
    expect(await keyDoors(adminKey)).toEqual({ v1: [200, undefined], rest: [200, undefined], mcp: [200, undefined], stream: [200, undefined] })
  })

  it('an OAuth grant of the member answers 401 two_factor_required on /mcp, and works again once they enrol', async () => {
    const fx = await teamWithRoles(app)
    await enrol(fx.owner)
    const { tokens } = await connectApp(fx.member, fx.teamId, { tasks: 'read' })
    expect((await mcpPost(tokens.access_token)).status).toBe(200)
    await setPolicy(fx, 'everyone')
    await waitFor('the grant to be refused', async () => (await mcpPost(tokens.access_token)).status === 401)
    const refused = await mcpPost(tokens.access_token)
    expect(refused.headers.get('www-authenticate')).toMatch(/error="invalid_token"/)
    expect(await refused.json()).toMatchObject({ code: 'two_factor_required' })
    await enrol(fx.member)
    await waitFor('the grant to work again', async () => (await mcpPost(tokens.access_token)).status === 200)
  })

  it('closes an open event stream, refuses a realtime join and closes an open socket', async () => {
    const fx = await teamWithRoles(app)
    await enrol(fx.owner)
    const key = await keyOf(fx.admin, fx.teamId, 'Live')
    const live = openEventStream(`${app.url}/api/v1/events/stream`, key.key, ['tasks.created'])
    streams.push(live)
    await waitFor('the stream to open', () => live.raw().includes(': connected'))
    const statuses: string[] = []
    const channel = supabase(key.key).channel('policy-open').on('postgres_changes', { event: '*', schema: 'public', table: 'tasks' }, () => {})
    await new Promise<void>((resolve) => {
      channel.subscribe((status) => {
        statuses.push(status)
        if (status === 'SUBSCRIBED') resolve()
      })
    })

    await setPolicy(fx, 'everyone')
    await waitFor('the stream to end', () => live.errors > 0)
    await waitFor('the socket\'s channel to fail', () => statuses.some(status => status === 'CHANNEL_ERROR' || status === 'CLOSED'))
    const joined = await subscribe(supabase(key.key).channel('policy-join').on('postgres_changes', { event: '*', schema: 'public', table: 'tasks' }, () => {}))
    expect(joined.status).toBe('CHANNEL_ERROR')
    expect(String(joined.error?.message)).toMatch(/two-factor/)

    await enrol(fx.admin)
    await waitFor('a join to be accepted again', async () => {
      const again = await subscribe(supabase(key.key).channel(`policy-again-${Date.now()}`).on('postgres_changes', { event: '*', schema: 'public', table: 'tasks' }, () => {}))
      return again.status === 'SUBSCRIBED'
    })
  })
})
