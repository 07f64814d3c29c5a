import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, teamWithRoles, type TeamFixture } from '../support/http'

// Key permissions: a key reads or writes only the tables its scopes name, on every route of the
// public API, and its OpenAPI document lists only what it may call. Rolling a key gives a new
// secret with the same permissions while the old one works for the chosen overlap.
let app: TestApp
let fixture: TeamFixture
let projectId: string
let taskId: string
beforeAll(async () => {
  app = await startApp()
  fixture = await teamWithRoles(app)
  const writer = await keyWith(undefined)
  projectId = (await writer.post('/api/v1/projects', { name: 'Scoped project' })).body.id
  taskId = (await writer.post('/api/v1/tasks', { title: 'Scoped task', project_id: projectId })).body.id
})
afterAll(() => app?.stop())

const keysPath = () => `/api/teams/${fixture.teamId}/api-keys`

async function keyWith(scopes: Record<string, string> | undefined, name = 'Scoped'): Promise<KeyClient> {
  const answer = await fixture.owner.post(keysPath(), scopes === undefined ? { name } : { name, scopes })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return new KeyClient(app, answer.body.key)
}

async function rowCounts() {
  const { rows } = await app.db.query(
    `select (select count(*) from public.tasks where team_id = $1)::int as tasks,
            (select count(*) from public.projects where team_id = $1)::int as projects,
            (select string_agg(title, ',' order by title) from public.tasks where team_id = $1) as titles`,
    [fixture.teamId],
  )
  return rows[0]
}

/** Every route of a table, with what it needs. */
function routes(table: 'tasks' | 'projects', id: string) {
  const body = table === 'tasks' ? { title: 'Refused write' } : { name: 'Refused write' }
  return [
    { needs: 'read', call: (key: KeyClient) => key.get(`/api/v1/${table}`) },
    { needs: 'read', call: (key: KeyClient) => key.get(`/api/v1/${table}/${id}`) },
    { needs: 'write', call: (key: KeyClient) => key.post(`/api/v1/${table}`, body) },
    { needs: 'write', call: (key: KeyClient) => key.patch(`/api/v1/${table}/${id}`, body) },
    { needs: 'write', call: (key: KeyClient) => key.delete(`/api/v1/${table}/${id}`) },
  ] as const
}

describe('key scopes', () => {
  it('a key created without scopes may read and write every table, and says so', async () => {
    const answer = await fixture.owner.post(keysPath(), { name: 'Default' })
    expect(answer.body.scopes).toEqual({ '*': 'write' })
    const listed = (await fixture.owner.get(keysPath())).body.find((key: { id: string }) => key.id === answer.body.id)
    expect(listed.scopes).toEqual({ '*': 'write' })
  })

  it('a read-only key reads every table and gets 403 naming the table and the access on every write, writing nothing', async () => {
    const reader = await keyWith({ '*': 'read' })
    const before = await rowCounts()
    for (const table of ['tasks', 'projects'] as const) {
      for (const route of routes(table, table === 'tasks' ? taskId : projectId)) {
        const answer = await route.call(reader)
        if (route.needs === 'read') {
          expect(answer.status).toBe(200)
        }
        else {
          expect(answer.status).toBe(403)
          expect(answer.body.error).toBe(`This API key may not write ${table} (its scopes lack write access to it)`)
        }
      }
    }
    expect(await rowCounts()).toEqual(before)
  })

  it('a key for one table gets 403 on every route of the others; the most specific entry wins', async () => {
    const tasksOnly = await keyWith({ tasks: 'write' })
    for (const route of routes('projects', projectId)) {
      const answer = await route.call(tasksOnly)
      expect(answer.status).toBe(403)
      expect(answer.body.error).toBe(`This API key may not ${route.needs} projects (its scopes lack ${route.needs} access to it)`)
    }
    expect((await tasksOnly.get(`/api/v1/tasks/${taskId}`)).status).toBe(200)
    const created = await tasksOnly.post('/api/v1/tasks', { title: 'Allowed write' })
    expect(created.status).toBe(201)
    expect((await tasksOnly.delete(`/api/v1/tasks/${created.body.id}`)).status).toBe(204)

    const mixed = await keyWith({ '*': 'write', 'projects': 'read' })
    expect((await mixed.post('/api/v1/projects', { name: 'No' })).status).toBe(403)
    expect((await mixed.get('/api/v1/projects')).status).toBe(200)
    const task = await mixed.post('/api/v1/tasks', { title: 'Yes', project_id: projectId })
    expect(task.status).toBe(201)
    await mixed.delete(`/api/v1/tasks/${task.body.id}`)
  })

  it('an unknown table, an access level other than read or write, or no table at all is a 400 naming it; nothing is created', async () => {
    const { rows: [before] } = await app.db.query('select count(*)::int as n from public.api_keys')
    const cases: [unknown, RegExp][] = [
      [{ invoices: 'read' }, /^scopes\.invoices: is not a table of the public API$/],
      [{ api_keys: 'read' }, /^scopes\.api_keys: is not a table of the public API$/],
      [{ activity_log: 'write' }, /^scopes\.activity_log: is not a table of the public API$/],
      [{ 'tasks; drop table tasks': 'read' }, /^scopes\.tasks; drop table tasks: is not a table/],
      [{ tasks: 'admin' }, /^scopes\.tasks: must be "read" or "write"$/],
      [{ tasks: true }, /^scopes\.tasks: must be "read" or "write"$/],
      [{}, /^scopes: must give access to at least one table$/],
      [['tasks'], /^scopes: /],
      ['*', /^scopes: /],
    ]
    for (const [scopes, message] of cases) {
      const answer = await fixture.owner.post(keysPath(), { name: 'Bad scopes', scopes })
      expect(answer.status, JSON.stringify(scopes)).toBe(400)
      expect(answer.body.error, JSON.stringify(scopes)).toMatch(message)
    }
    const { rows: [after] } = await app.db.query('select count(*)::int as n from public.api_keys')
    expect(after.n).toBe(before.n)
  })

  it('the OpenAPI document lists only the operations the key may call; without a key, all of them', async () => {
    const operations = (document: { paths: Record<string, Record<string, { operationId?: string }>> }) =>
      Object.values(document.paths).flatMap(path => Object.values(path).map(op => op.operationId).filter(Boolean)).sort()
    const all = operations((await fetch(`${app.url}/api/v1/openapi.json`).then(r => r.json())))
    expect(all).toEqual(expect.arrayContaining(['create_projects', 'delete_tasks', 'list_notes']))

    const tasksOnly = await keyWith({ tasks: 'write', projects: 'read' })
    const scoped = (await tasksOnly.get('/api/v1/openapi.json')).body
    expect(operations(scoped)).toEqual([
      'create_tasks', 'delete_tasks', 'delete_tasks_where', 'get_projects', 'get_tasks', 'head_projects', 'head_tasks',
      'list_events', 'list_projects', 'list_tasks', 'stream_events', 'update_tasks', 'update_tasks_where',
    ])
    expect(Object.keys(scoped.components.schemas)).not.toContain('projects_create')
    expect(Object.keys(scoped.components.schemas)).not.toContain('notes')

    const forged = await new KeyClient(app, 'not-a-key').get('/api/v1/openapi.json')
    expect(forged.status).toBe(401)
  })
})

describe('rolling a key', () => {
  const rollPath = (id: string) => `${keysPath()}/${id}/roll`

  it('gives a new key with the same name and scopes; the old one works during the overlap', async () => {
    const created = await fixture.owner.post(keysPath(), { name: 'Rolled', scopes: { tasks: 'read' } })
    const old = new KeyClient(app, created.body.key)
    const answer = await fixture.admin.post(rollPath(created.body.id), { expires_in_seconds: 3600 })
    expect(answer.status).toBe(201)
    expect(answer.body).toMatchObject({ name: 'Rolled', scopes: { tasks: 'read' }, revoked_at: null, created_by: fixture.admin.user!.id })
    expect(answer.body.key).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(answer.body.id).not.toBe(created.body.id)
    const fresh = new KeyClient(app, answer.body.key)
    expect((await fresh.get('/api/v1/tasks')).status).toBe(200)
    expect((await fresh.get('/api/v1/projects')).status).toBe(403)
    expect((await old.get('/api/v1/tasks')).status).toBe(200)
    const { rows } = await app.db.query(`select extract(epoch from expires_at - now())::int as left from public.api_keys where id = $1`, [created.body.id])
    expect(rows[0].left).toBeGreaterThan(3500)
    expect(rows[0].left).toBeLessThanOrEqual(3600)
  })

  it('without an overlap the old key stops at once; an empty body means no overlap', async () => {
    const created = await fixture.owner.post(keysPath(), { name: 'Rolled now' })
    const old = new KeyClient(app, created.body.key)
    const response = await fetch(`${app.url}${rollPath(created.body.id)}`, { method: 'POST', headers: { cookie: fixture.owner.cookie } })
    expect(response.status).toBe(201)
    const answer = await old.get('/api/v1/tasks')
    expect(answer.status).toBe(401)
    expect(answer.body.error).toBe('This API key has expired')
  })

  it('answers 409 for a revoked or expired key, 404 for another team\'s, 400 for a bad overlap, 403 for a member; nothing is created', async () => {
    const { rows: [before] } = await app.db.query('select count(*)::int as n from public.api_keys')
    const revoked = await fixture.owner.post(keysPath(), { name: 'Revoked' })
    await fixture.owner.patch(`${keysPath()}/${revoked.body.id}`)
    const refused = await fixture.owner.post(rollPath(revoked.body.id))
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatch(/revoked/)

    const expiring = await fixture.owner.post(keysPath(), { name: 'Expired' })
    await app.db.query(`update public.api_keys set expires_at = now() - interval '1 second' where id = $1`, [expiring.body.id])
    expect((await fixture.owner.post(rollPath(expiring.body.id))).status).toBe(409)

    const outsiderTeam = (await fixture.outsider.get('/api/auth/me')).body.teams[0].id
    const foreign = await fixture.outsider.post(`/api/teams/${outsiderTeam}/api-keys`, { name: 'Foreign' })
    expect((await fixture.owner.post(`${keysPath()}/${foreign.body.id}/roll`)).status).toBe(404)
    expect((await fixture.owner.post(`/api/teams/${outsiderTeam}/api-keys/${foreign.body.id}/roll`)).status).toBe(404)

    const active = await fixture.owner.post(keysPath(), { name: 'Active' })
    for (const overlap of [-1, 604801, 1.5, '60', null]) {
      const answer = await fixture.owner.post(rollPath(active.body.id), { expires_in_seconds: overlap })
      expect(answer.status, String(overlap)).toBe(400)
      expect(answer.body.error).toMatch(/^expires_in_seconds: /)
    }
    expect((await fixture.member.post(rollPath(active.body.id))).status).toBe(403)
    const { rows: [after] } = await app.db.query('select count(*)::int as n from public.api_keys')
    expect(after.n - before.n).toBe(4)
  })
})
