import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, teamWithRoles, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'

let app: TestApp
let fixture: TeamFixture
beforeAll(async () => {
  app = await startApp()
  fixture = await teamWithRoles(app)
})
afterAll(() => app?.stop())

const keysPath = (teamId: string) => `/api/teams/${teamId}/api-keys`

async function createKey(client: Client, teamId: string, body: Record<string, unknown> = { name: 'Integration' }) {
  const answer = await client.post(keysPath(teamId), body)
  expect(answer.status).toBe(201)
  return answer.body as { id: string, key: string, key_prefix: string } & Record<string, unknown>
}

/** A GET of the public API with a raw Authorization header. */
const callApi = (authorization?: string) =>
  new Client(app).get('/api/v1/tasks', authorization === undefined ? {} : { authorization })

describe('API key management routes', () => {
  it.each([
    ['owner', 200], ['admin', 200], ['member', 403], ['outsider', 404], ['anonymous', 401],
  ] as const)('GET as %s answers %i', async (who, status) => {
    expect((await fixture[who].get(keysPath(fixture.teamId))).status).toBe(status)
  })

  it.each([
    ['owner', 201], ['admin', 201], ['member', 403], ['outsider', 404], ['anonymous', 401],
  ] as const)('POST as %s answers %i', async (who, status) => {
    const before = await app.db.query('select count(*)::int as n from public.api_keys')
    const answer = await fixture[who].post(keysPath(fixture.teamId), { name: `by ${who}` })
    expect(answer.status).toBe(status)
    const after = await app.db.query('select count(*)::int as n from public.api_keys')
    expect(after.rows[0].n - before.rows[0].n).toBe(status === 201 ? 1 : 0)
  })

  it.each([
    ['owner', 200], ['admin', 200], ['member', 403], ['outsider', 404], ['anonymous', 401],
  ] as const)('PATCH (revoke) as %s answers %i', async (who, status) => {
    const { id } = await createKey(fixture.owner, fixture.teamId)
    const answer = await fixture[who].patch(`${keysPath(fixture.teamId)}/${id}`)
    expect(answer.status).toBe(status)
    const { rows } = await app.db.query('select revoked_at from public.api_keys where id = $1', [id])
    expect(rows[0].revoked_at === null).toBe(status !== 200)
  })

  it('creates a key: the raw key once, prefix and SHA-256 hash stored, never the key itself', async () => {
    const answer = await fixture.admin.post(keysPath(fixture.teamId), { name: '  Zapier  ' })
    expect(answer.status).toBe(201)
    const created = answer.body
    expect(created.key).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(created).toMatchObject({
      name: 'Zapier', team_id: fixture.teamId, created_by: fixture.admin.user!.id, created_by_name: 'Adam Admin',
      key_prefix: created.key.slice(0, 8), last_used_at: null, expires_at: null, revoked_at: null,
    })
    expect(created).not.toHaveProperty('key_hash')
    const { rows } = await app.db.query('select key_hash, row_to_json(k)::text as row from public.api_keys k where id = $1', [created.id])
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(rows[0].row).not.toContain(created.key)
    const list = await fixture.owner.get(keysPath(fixture.teamId))
    const listed = list.body.find((key: { id: string }) => key.id === created.id)
    expect(listed).not.toHaveProperty('key')
    expect(listed).not.toHaveProperty('key_hash')
  })

  it('logs key writes in the activity log without key_hash', async () => {
    const created = await createKey(fixture.owner, fixture.teamId, { name: 'Logged' })
    await fixture.owner.patch(`${keysPath(fixture.teamId)}/${created.id}`)
    const { rows } = await app.db.query(
      `select action, actor_id, source, new_data, old_data from public.activity_log
       where table_name = 'api_keys' and record_id = $1 order by created_at`, [created.id])
    expect(rows.map(row => [row.action, row.actor_id, row.source])).toEqual([
      ['insert', fixture.owner.user!.id, 'web'],
      ['update', fixture.owner.user!.id, 'web'],
    ])
    for (const row of rows) {
      expect(row.new_data).not.toHaveProperty('key_hash')
      expect(JSON.stringify(row)).not.toContain(created.key)
    }
  })

  it('lists the team\'s keys newest first with the creator\'s name, and no other team\'s keys', async () => {
    const { teamId, owner, admin } = await teamWithRoles(app)
    const first = await createKey(owner, teamId, { name: 'first' })
    const second = await createKey(admin, teamId, { name: 'second' })
    await app.db.query(`update public.api_keys set created_at = now() - interval '1 hour' where id = $1`, [second.id])
    const third = await createKey(owner, teamId, { name: 'third' })
    await createKey(fixture.owner, fixture.teamId, { name: 'elsewhere' })
    const list = await owner.get(keysPath(teamId))
    expect(list.status).toBe(200)
    expect(list.body.map((key: { id: string }) => key.id)).toEqual([third.id, first.id, second.id])
    expect(list.body.map((key: { created_by_name: string }) => key.created_by_name)).toEqual(['Olive Owner', 'Olive Owner', 'Adam Admin'])
  })

  it('stores an optional expiry and refuses one in the past', async () => {
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString()
    const created = await createKey(fixture.owner, fixture.teamId, { name: 'Expiring', expires_at: expiresAt })
    expect(created.expires_at).toBe(expiresAt)
    const past = await fixture.owner.post(keysPath(fixture.teamId), { name: 'Old', expires_at: '2020-01-01T00:00:00Z' })
    expect(past.status).toBe(400)
    expect(past.body.error).toMatch(/^expires_at:/)
  })

  it.each([
    [{}, /^name:/],
    [{ name: '   ' }, /^name:/],
    [{ name: 'x'.repeat(101) }, /^name:/],
    [{ name: 42 }, /^name:/],
    [{ name: 'ok', expires_at: 'soon' }, /^expires_at:/],
  ])('answers 400 for %j and writes nothing', async (body, message) => {
    const before = await app.db.query('select count(*)::int as n from public.api_keys')
    const answer = await fixture.owner.post(keysPath(fixture.teamId), body)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
    const after = await app.db.query('select count(*)::int as n from public.api_keys')
    expect(after.rows[0].n).toBe(before.rows[0].n)
  })

  it('answers 409 when the key is already revoked, and keeps the first revocation time', async () => {
    const { id } = await createKey(fixture.owner, fixture.teamId)
    const first = await fixture.owner.patch(`${keysPath(fixture.teamId)}/${id}`)
    expect(first.status).toBe(200)
    expect(first.body.revoked_at).toEqual(expect.any(String))
    const again = await fixture.owner.patch(`${keysPath(fixture.teamId)}/${id}`)
    expect(again.status).toBe(409)
    expect(again.body.error).toMatch(/already revoked/)
    const { rows } = await app.db.query('select revoked_at from public.api_keys where id = $1', [id])
    expect(new Date(rows[0].revoked_at).toISOString()).toBe(first.body.revoked_at)
  })

  it('answers 404 for a key of another team, and leaves it active', async () => {
    const other = await teamWithRoles(app)
    const { id } = await createKey(other.owner, other.teamId)
    const answer = await fixture.owner.patch(`${keysPath(fixture.teamId)}/${id}`)
    expect(answer.status).toBe(404)
    const { rows } = await app.db.query('select revoked_at from public.api_keys where id = $1', [id])
    expect(rows[0].revoked_at).toBeNull()
    expect((await fixture.owner.patch(`${keysPath(fixture.teamId)}/not-a-uuid`)).status).toBe(404)
    expect((await fixture.owner.patch(`${keysPath(fixture.teamId)}/00000000-0000-4000-8000-00000000dead`)).status).toBe(404)
  })
})

describe('authApiKey', () => {
  it('accepts a valid key', async () => {
    const { key } = await createKey(fixture.owner, fixture.teamId)
    const answer = await callApi(`Bearer ${key}`)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual([])
  })

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['a bare token', 'sk_abc'],
    ['Bearer without a token', 'Bearer '],
    ['an unknown key', 'Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('answers 401 for %s', async (_, authorization) => {
    const answer = await callApi(authorization)
    expect(answer.status).toBe(401)
    expect(answer.body).toMatchObject({ error: expect.any(String) })
    expect(answer.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('refuses a revoked key on the very next request', async () => {
    const { id, key } = await createKey(fixture.owner, fixture.teamId)
    expect((await callApi(`Bearer ${key}`)).status).toBe(200)
    expect((await fixture.owner.patch(`${keysPath(fixture.teamId)}/${id}`)).status).toBe(200)
    const answer = await callApi(`Bearer ${key}`)
    expect(answer.status).toBe(401)
    expect(answer.body).toMatchObject({ error: 'This API key has been revoked' })
  })

  it('refuses an expired key', async () => {
    const expiresAt = new Date(Date.now() + 60_000).toISOString()
    const { id, key } = await createKey(fixture.owner, fixture.teamId, { name: 'Short-lived', expires_at: expiresAt })
    expect((await callApi(`Bearer ${key}`)).status).toBe(200)
    await app.db.query(`update public.api_keys set expires_at = now() - interval '1 second' where id = $1`, [id])
    // a change made outside the app reaches it by notification: within 100 ms, not necessarily before the next request
    const answer = await waitFor('the key to be refused', async () => {
      const got = await callApi(`Bearer ${key}`)
      return got.status === 401 && got
    }, { timeoutMs: 1_000 })
    expect(answer.body).toMatchObject({ error: 'This API key has expired' })
  })

  it('records last_used_at once a minute at most, however busy the key', async () => {
    const { id, key } = await createKey(fixture.owner, fixture.teamId)
    await Promise.all(Array.from({ length: 10 }, () => callApi(`Bearer ${key}`)))
    for (let i = 0; i < 5; i++) expect((await callApi(`Bearer ${key}`)).status).toBe(200)
    // once one write has set last_used_at, any other write of this burst finds it recent and changes nothing
    const lastUsed = await waitFor('last_used_at to be recorded', async () =>
      (await app.db.query('select last_used_at from public.api_keys where id = $1', [id])).rows[0].last_used_at as Date | null)
    expect(lastUsed).toBeInstanceOf(Date)
    const { rows } = await app.db.query(
      `select count(*)::int as n from public.activity_log where table_name = 'api_keys' and record_id = $1 and action = 'update'`, [id])
    // last_used_at alone is a quiet column: recording it writes no activity entry
    expect(rows[0].n).toBe(0)
    const again = await app.db.query('select last_used_at from public.api_keys where id = $1', [id])
    expect(again.rows[0].last_used_at).toEqual(lastUsed)
  })

  it('does not fail the request when last_used_at cannot be written', async () => {
    const { id, key } = await createKey(fixture.owner, fixture.teamId)
    // the key's row is locked by another transaction: the request must still answer at once
    const locker = await app.db.connect()
    try {
      await locker.query('begin')
      await locker.query('select 1 from public.api_keys where id = $1 for update', [id])
      const started = Date.now()
      const answer = await callApi(`Bearer ${key}`)
      expect(answer.status).toBe(200)
      expect(Date.now() - started).toBeLessThan(2000)
    }
    finally {
      await locker.query('rollback')
      locker.release()
    }
  })
})
