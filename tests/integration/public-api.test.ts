import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { appWithTeamForFile } from '../support/file-hooks'
import { Client, keyClientFor, signUp, teamWithRoles, type KeyClient, type TeamFixture } from '../support/http'

let app: TestApp
let fixture: TeamFixture
let other: TeamFixture
let api: KeyClient
let otherApi: KeyClient
let projectId: string
let otherProjectId: string

const keyFor = (team: Pick<TeamFixture, 'teamId' | 'owner'>) => keyClientFor(app, team, 'Public API test')

appWithTeamForFile({}, async (started) => {
  ({ app, team: fixture } = started)
  other = await teamWithRoles(app)
  api = await keyFor(fixture)
  otherApi = await keyFor(other)
  projectId = (await api.post('/api/v1/projects', { name: 'Apollo' })).body.id
  otherProjectId = (await otherApi.post('/api/v1/projects', { name: 'Secret' })).body.id
})

const count = async (sql: string, params: unknown[] = []) => (await app.db.query(sql, params)).rows[0].n as number
const teamTasks = (teamId: string) => count('select count(*)::int as n from public.tasks where team_id = $1', [teamId])

describe('GET /api/v1/{table}', () => {
  it('lists the team\'s records newest first with joined names, default 50 and at most 100', async () => {
    const { teamId, owner, member } = await teamWithRoles(app)
    const key = await keyFor({ teamId, owner })
    const project = (await key.post('/api/v1/projects', { name: 'Listing' })).body
    await app.db.query(
      `insert into public.tasks (team_id, created_by, title, project_id, assignee_id, created_at)
       select $1, $2, 'task ' || i, $3, $4, now() - make_interval(mins => i) from generate_series(1, 120) i`,
      [teamId, owner.user!.id, project.id, member.user!.id])
    const page = await key.get('/api/v1/tasks')
    expect(page.status).toBe(200)
    expect(page.body).toHaveLength(50)
    expect(page.body.slice(0, 3).map((task: { title: string }) => task.title)).toEqual(['task 1', 'task 2', 'task 3'])
    expect(page.body[0]).toMatchObject({
      team_id: teamId, project_id: project.id, project_name: 'Listing',
      assignee_id: member.user!.id, assignee_name: 'Mia Member', created_by_name: 'Olive Owner',
    })
    const times = page.body.map((task: { created_at: string }) => Date.parse(task.created_at))
    expect(times).toEqual([...times].sort((a, b) => b - a))
    expect((await key.get('/api/v1/tasks?limit=100')).body).toHaveLength(100)
    const offset = await key.get('/api/v1/tasks?limit=10&offset=115')
    expect(offset.body.map((task: { title: string }) => task.title)).toEqual(['task 116', 'task 117', 'task 118', 'task 119', 'task 120'])
    expect((await key.get('/api/v1/tasks?offset=500')).body).toEqual([])
  })

  it.each(['limit=0', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=x', 'offset=1e20', 'limit=1;drop table tasks'])('answers 400 for %s', async (query) => {
    const answer = await api.get(`/api/v1/tasks?${query}`)
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({ error: expect.stringMatching(/^(limit|offset):/) })
  })

  it('never shows another team\'s records', async () => {
    await otherApi.post('/api/v1/tasks', { title: 'Other team task' })
    const answer = await api.get('/api/v1/tasks?limit=100')
    expect(answer.body.every((task: { team_id: string }) => task.team_id === fixture.teamId)).toBe(true)
  })

  it.each(['api_keys', 'profiles', 'teams', 'team_members', 'activity_log', 'rate_limits', 'schema_migrations', 'nope', 'pg_class'])(
    'answers 404 for the table %s', async (table) => {
      const answer = await api.get(`/api/v1/${table}`)
      expect(answer.status).toBe(404)
      expect(answer.body).toMatchObject({ error: expect.any(String) })
    })

  it('answers 401 before anything else without a key', async () => {
    expect((await new Client(app).get('/api/v1/nope')).status).toBe(401)
  })
})

describe('GET /api/v1/{table}/{id}', () => {
  it('answers one record of the team, and 404 for another team\'s or a malformed id', async () => {
    const task = (await api.post('/api/v1/tasks', { title: 'Single', project_id: projectId })).body
    const answer = await api.get(`/api/v1/tasks/${task.id}`)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual(task)
    expect((await otherApi.get(`/api/v1/tasks/${task.id}`)).status).toBe(404)
    expect((await api.get('/api/v1/tasks/not-a-uuid')).status).toBe(404)
    expect((await api.get(`/api/v1/projects/${otherProjectId}`)).status).toBe(404)
  })
})

describe('POST /api/v1/{table}', () => {
  it('creates a record for the key\'s team and creator, logged with source api', async () => {
    const answer = await api.post('/api/v1/tasks', {
      title: 'Ship it', status: 'in_progress', priority: 2, project_id: projectId,
      assignee_id: fixture.member.user!.id, due_date: '2026-03-01',
    })
    expect(answer.status).toBe(201)
    expect(answer.body).toMatchObject({
      title: 'Ship it', status: 'in_progress', priority: 2, due_date: '2026-03-01', completed_at: null,
      team_id: fixture.teamId, created_by: fixture.owner.user!.id, created_by_name: 'Olive Owner',
      project_name: 'Apollo', assignee_name: 'Mia Member',
    })
    const { rows } = await app.db.query(
      `select actor_id, source, source_ref, action, team_id from public.activity_log where table_name = 'tasks' and record_id = $1`, [answer.body.id])
    expect(rows).toEqual([{ actor_id: fixture.owner.user!.id, source: 'api', source_ref: null, action: 'insert', team_id: fixture.teamId }])
  })

  it('fills defaults: status todo, priority 3', async () => {
    const answer = await api.post('/api/v1/tasks', { title: 'Defaults' })
    expect(answer.status).toBe(201)
    expect(answer.body).toMatchObject({ status: 'todo', priority: 3, project_id: null, project_name: null })
  })

  it.each([
    ['a missing required column', {}, /^title:/],
    ['an unknown field', { title: 'x', colour: 'red' }, /^colour: is not a column of tasks/],
    ['a system field (id)', { title: 'x', id: '00000000-0000-4000-8000-000000000001' }, /^id: is a system column/],
    ['a system field (team_id)', { title: 'x', team_id: '00000000-0000-4000-8000-000000000001' }, /^team_id: is a system column/],
    ['a system field (created_by)', { title: 'x', created_by: '00000000-0000-4000-8000-000000000001' }, /^created_by: is a system column/],
    ['a system field (created_at)', { title: 'x', created_at: '2020-01-01T00:00:00Z' }, /^created_at: is a system column/],
    ['a wrong type', { title: 42 }, /^title:/],
    ['a wrong integer', { title: 'x', priority: 'high' }, /^priority:/],
    ['a malformed date', { title: 'x', due_date: '31/12/2026' }, /^due_date:/],
    ['a value outside a CHECK list', { title: 'x', status: 'blocked' }, /^status:.*todo.*in_progress.*done/],
    ['a value outside a CHECK range', { title: 'x', priority: 9 }, /^priority: must be an integer between 1 and 5$/],
    ['a compound CHECK', { title: 'x', status: 'done' }, /violates tasks_done_has_completed_at/],
    ['a null required column', { title: null }, /^title:/],
    ['a foreign key to another team\'s row', { title: 'x', project_id: 'OTHER' }, /^project_id:/],
    ['a foreign key to no row', { title: 'x', project_id: '00000000-0000-4000-8000-00000000beef' }, /^project_id:/],
    ['an assignee outside the team', { title: 'x', assignee_id: 'OUTSIDER' }, /^assignee_id:/],
    ['an SQL-injection body key', { 'title" = \'x\'; drop table tasks; --': 'x', 'title': 'x' }, /is not a column of tasks/],
  ])('answers 400 for %s and writes nothing', async (_, body, message) => {
    const input: Record<string, unknown> = { ...body }
    if (input.project_id === 'OTHER') input.project_id = otherProjectId
    if (input.assignee_id === 'OUTSIDER') input.assignee_id = fixture.outsider.user!.id
    const [tasksBefore, activityBefore] = [await teamTasks(fixture.teamId), await count(`select count(*)::int as n from public.activity_log where table_name = 'tasks'`)]
    const answer = await api.post('/api/v1/tasks', input)
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({ error: expect.stringMatching(message) })
    expect(await teamTasks(fixture.teamId)).toBe(tasksBefore)
    expect(await count(`select count(*)::int as n from public.activity_log where table_name = 'tasks'`)).toBe(activityBefore)
  })

  it.each([
    ['malformed JSON', '{"title": '],
    ['an array of strings', '["x"]'],
    ['a number', '42'],
    ['a string', '"title"'],
  ])('answers 400 for %s', async (_, raw) => {
    const answer = await api.post('/api/v1/tasks', raw)
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({ error: expect.any(String) })
  })
})

describe('PATCH /api/v1/{table}/{id}', () => {
  it('changes the given columns and logs one update with source api', async () => {
    const task = (await api.post('/api/v1/tasks', { title: 'To finish' })).body
    const answer = await api.patch(`/api/v1/tasks/${task.id}`, { status: 'done', completed_at: '2026-01-02T03:04:05Z', project_id: projectId })
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ id: task.id, title: 'To finish', status: 'done', project_name: 'Apollo', created_by_name: 'Olive Owner' })
    expect(new Date(answer.body.completed_at).toISOString()).toBe('2026-01-02T03:04:05.000Z')
    const { rows } = await app.db.query(
      `select actor_id, source, old_data from public.activity_log where table_name = 'tasks' and record_id = $1 and action = 'update'`, [task.id])
    // updated_at changed too: the database moved it
    expect(rows).toEqual([{ actor_id: fixture.owner.user!.id, source: 'api', old_data: { status: 'todo', completed_at: null, project_id: null, updated_at: expect.any(String) } }])
    expect(Date.parse(rows[0].old_data.updated_at)).toBe(Date.parse(task.updated_at))
  })

  it('answers 404 for another team\'s id and changes nothing', async () => {
    const task = (await otherApi.post('/api/v1/tasks', { title: 'Theirs' })).body
    const answer = await api.patch(`/api/v1/tasks/${task.id}`, { title: 'Mine now' })
    expect(answer.status).toBe(404)
    expect(answer.body).toMatchObject({ error: expect.any(String) })
    const { rows } = await app.db.query('select title from public.tasks where id = $1', [task.id])
    expect(rows[0].title).toBe('Theirs')
    expect((await api.patch('/api/v1/tasks/123', { title: 'x' })).status).toBe(404)
  })

  it.each([
    [{ team_id: '00000000-0000-4000-8000-000000000001' }, /^team_id: is a system column/],
    [{ title: '' }, /^title: must be a string 1 to 200 characters long$/],
    [{ status: 'nope' }, /^status:/],
    [{}, /at least one column/],
    [{ project_id: 'OTHER' }, /^project_id:/],
  ])('answers 400 for %j and changes nothing', async (body, message) => {
    const task = (await api.post('/api/v1/tasks', { title: 'Stable' })).body
    const input: Record<string, unknown> = { ...body }
    if (input.project_id === 'OTHER') input.project_id = otherProjectId
    const answer = await api.patch(`/api/v1/tasks/${task.id}`, input)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
    const { rows } = await app.db.query('select title, status, project_id, team_id from public.tasks where id = $1', [task.id])
    expect(rows[0]).toEqual({ title: 'Stable', status: 'todo', project_id: null, team_id: fixture.teamId })
  })
})

describe('DELETE /api/v1/{table}/{id}', () => {
  it('deletes the record (204) and logs it with source api', async () => {
    const note = (await api.post('/api/v1/notes', { title: 'Temporary', body: 'x', project_id: projectId })).body
    expect(note.project_name).toBe('Apollo')
    const answer = await api.delete(`/api/v1/notes/${note.id}`)
    expect(answer.status).toBe(204)
    expect(await count('select count(*)::int as n from public.notes where id = $1', [note.id])).toBe(0)
    const { rows } = await app.db.query(
      `select actor_id, source from public.activity_log where table_name = 'notes' and record_id = $1 and action = 'delete'`, [note.id])
    expect(rows).toEqual([{ actor_id: fixture.owner.user!.id, source: 'api' }])
    expect((await api.delete(`/api/v1/notes/${note.id}`)).status).toBe(404)
  })

  it('answers 404 for another team\'s id and deletes nothing', async () => {
    const answer = await api.delete(`/api/v1/projects/${otherProjectId}`)
    expect(answer.status).toBe(404)
    expect(await count('select count(*)::int as n from public.projects where id = $1', [otherProjectId])).toBe(1)
  })
})

describe('RateLimit-Remaining on one process', () => {
  it('says exactly what is left on every answer, also for requests served from a leased block and for errors', async () => {
    // the default limit (600 a minute) leases blocks of 30: most of these are served from a block
    const key = await keyFor(fixture)
    const requests = [
      () => key.get('/api/v1/tasks?limit=1'),
      () => key.get('/api/v1/tasks/00000000-0000-4000-8000-000000000404'),
      () => key.post('/api/v1/tasks', { title: '' }),
      () => key.post('/api/v1/notes', { title: 'Counted', body: 'x' }),
    ]
    const statuses = new Set<number>()
    // the window is a minute: should it roll over during the loop (RateLimit-Reset jumps up), the
    // count starts again from the request that opened the new window
    let countedInWindow = 0
    let previousReset = Infinity
    for (let i = 1; i <= 40; i++) {
      const answer = await requests[i % requests.length]!()
      statuses.add(answer.status)
      expect(answer.headers.get('ratelimit-limit')).toBe('600')
      const reset = Number(answer.headers.get('ratelimit-reset'))
      countedInWindow = reset > previousReset ? 1 : countedInWindow + 1
      previousReset = reset
      expect(answer.headers.get('ratelimit-remaining'), `request ${i} (${answer.status})`).toBe(String(600 - countedInWindow))
    }
    expect([...statuses].sort()).toEqual([200, 201, 400, 404])
  })
})

describe('hostile names', () => {
  it.each([
    'tasks;drop table tasks',
    'tasks%20where%201=1',
    '%22tasks%22',
    'public.tasks',
    'TASKS',
    'tasks--',
    'api_keys%00',
  ])('answers 404 for the table %s and changes nothing', async (table) => {
    const before = await teamTasks(fixture.teamId)
    for (const answer of [await api.get(`/api/v1/${table}`), await api.post(`/api/v1/${table}`, { title: 'x' })]) {
      expect(answer.status).toBe(404)
    }
    expect(await teamTasks(fixture.teamId)).toBe(before)
    expect(await count(`select count(*)::int as n from pg_tables where schemaname = 'public' and tablename = 'tasks'`)).toBe(1)
  })
})

describe('GET /api/v1/openapi.json', () => {
  it('describes every domain table with the bearer scheme, without a key', async () => {
    const answer = await new Client(app).get('/api/v1/openapi.json')
    expect(answer.status).toBe(200)
    expect(answer.body.openapi).toBe('3.1.0')
    expect(answer.body.components.securitySchemes.apiKey).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }))
    expect(Object.keys(answer.body.paths).sort()).toEqual([
      '/api/v1/events', '/api/v1/events/stream',
      '/api/v1/notes', '/api/v1/notes/{id}', '/api/v1/projects', '/api/v1/projects/{id}', '/api/v1/tasks', '/api/v1/tasks/{id}',
      '/api/v1/webhook-endpoints', '/api/v1/webhook-endpoints/{id}',
    ])
    expect(Object.keys(answer.body.paths['/api/v1/tasks/{id}']).sort()).toEqual(['delete', 'get', 'parameters', 'patch'])
    const task = answer.body.components.schemas.tasks
    expect(task.properties.status.enum).toEqual(['todo', 'in_progress', 'done'])
    expect(task.properties).toHaveProperty('project_name')
    expect(answer.body.components.schemas.tasks_create.required).toEqual(['title'])
    expect(answer.body.components.schemas.tasks_create.properties).not.toHaveProperty('team_id')
  })
})

describe('a new user', () => {
  it('sees the domain through their own team\'s key only', async () => {
    const owner = await signUp(app, { name: 'Nina New' })
    const teamId = (await owner.post('/api/teams', { name: 'Fresh' })).body.id
    const key = await keyFor({ teamId, owner })
    expect((await key.get('/api/v1/projects')).body).toEqual([])
  })
})
