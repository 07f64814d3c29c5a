import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, teamWithRoles } from '../support/http'

let app: TestApp
let key: KeyClient
let teamId: string

type Task = { id: string, title: string, priority: number, status: string }
const titles = (rows: Task[]) => rows.map(row => row.title)

beforeAll(async () => {
  app = await startApp()
  const team = await teamWithRoles(app)
  teamId = team.teamId
  const answer = await team.owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Query language' })
  expect(answer.status).toBe(201)
  key = new KeyClient(app, answer.body.key)
  await app.db.query(
    `insert into public.tasks (team_id, created_by, title, priority, status, completed_at, created_at)
     select $1, $2, 'task ' || i, 1 + i % 5, case when i % 3 = 0 then 'done' else 'todo' end,
            case when i % 3 = 0 then now() end, now() - make_interval(mins => i)
     from generate_series(1, 30) i`,
    [teamId, team.owner.user!.id])
})
afterAll(() => app?.stop())

describe('GET /api/v1/{table} query language', () => {
  it('filters with eq, in, like, gte and not., and orders by columns', async () => {
    const done = await key.get<Task[]>('/api/v1/tasks?status=eq.done&order=priority.asc,title.asc&limit=100')
    expect(done.status).toBe(200)
    expect(done.body).toHaveLength(10)
    expect(done.body.every(task => task.status === 'done')).toBe(true)
    expect(done.body.map(task => task.priority)).toEqual([...done.body.map(task => task.priority)].sort())
    const some = await key.get<Task[]>('/api/v1/tasks?title=in.(task 1,task 2,"task 3")&order=title.asc')
    expect(titles(some.body)).toEqual(['task 1', 'task 2', 'task 3'])
    const like = await key.get<Task[]>('/api/v1/tasks?title=like.task 2*&priority=gte.1&order=title.asc')
    expect(titles(like.body)).toEqual(['task 2', 'task 20', 'task 21', 'task 22', 'task 23', 'task 24', 'task 25', 'task 26', 'task 27', 'task 28', 'task 29'])
    const notDone = await key.get<Task[]>('/api/v1/tasks?status=not.eq.done&limit=100')
    expect(notDone.body).toHaveLength(20)
  })

  it('pages with signed cursors in Link headers and counts with Prefer: count=exact', async () => {
    const seen: string[] = []
    let path: string | null = '/api/v1/tasks?order=title.asc&limit=7'
    let first = true
    while (path) {
      const page: { status: number, body: Task[], headers: Headers } = await key.get<Task[]>(path, first ? { prefer: 'count=exact' } : {})
      expect(page.status).toBe(200)
      if (first) {
        expect(page.headers.get('content-range')).toBe('0-6/30')
        expect(page.headers.get('preference-applied')).toBe('count=exact')
        first = false
      }
      seen.push(...titles(page.body))
      const link = page.headers.get('link')
      // the Link is absolute: the app's origin, then the path to follow
      path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]!.replace(app.url, '') : null
    }
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => `task ${i + 1}`).sort())
  })

  it('answers 400 for a forged or reused cursor', async () => {
    const page = await key.get('/api/v1/tasks?order=title.asc&limit=5')
    const cursor = new URL(/<([^>]+)>/.exec(page.headers.get('link')!)![1]!, app.url).searchParams.get('cursor')!
    const [payload, signature] = cursor.split('.')
    const forged = `${Buffer.from(JSON.stringify(['task 9\' or 1=1 --', '00000000-0000-0000-0000-000000000000'])).toString('base64url')}.${signature}`
    for (const bad of [forged, `${payload}.x`, 'garbage', `${payload}`]) {
      const answer = await key.get(`/api/v1/tasks?order=title.asc&limit=5&cursor=${encodeURIComponent(bad)}`)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toMatch(/^cursor:/)
    }
    const otherOrder = await key.get(`/api/v1/tasks?order=title.desc&limit=5&cursor=${encodeURIComponent(cursor)}`)
    expect(otherOrder.status).toBe(400)
    expect(otherOrder.body.error).toMatch(/^cursor:/)
  })

  it.each([
    ['title;drop table tasks=eq.x', /is not a column of tasks/],
    ['"title"=eq.x', /is not a column of tasks/],
    ['title=regex.x', /unknown operator/],
    ['priority=eq.1 or 1=1', /^priority: must be an integer \("1 or 1=1" is not\)/],
    ['status=eq.open\'--', /^status: must be one of: todo, in_progress, done \("open'--" is not\)/],
    ['priority=in.(1,2);select 1', /in takes a list/],
    ['order=title;drop table tasks', /order:/],
    ['order=title.sideways', /order:/],
    ['order=pg_sleep(1).asc', /order:/],
  ])('answers 400 naming the problem for %s and changes nothing', async (query, message) => {
    const before = (await app.db.query('select count(*)::int as n from public.tasks where team_id = $1', [teamId])).rows[0].n
    const [name, ...value] = query.split('=')
    const answer = await key.get(`/api/v1/tasks?${encodeURIComponent(name!)}=${encodeURIComponent(value.join('='))}`)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
    expect((await app.db.query('select count(*)::int as n from public.tasks where team_id = $1', [teamId])).rows[0].n).toBe(before)
  })
})

describe('select', () => {
  it('answers only the chosen columns, plus the joined name of a chosen foreign key, on every page', async () => {
    const page = await key.get('/api/v1/tasks?select=title,priority&order=title.asc&limit=5')
    expect(page.status).toBe(200)
    expect(page.body).toHaveLength(5)
    for (const row of page.body) expect(Object.keys(row).sort()).toEqual(['priority', 'title'])
    // the next page keeps the select
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')![1]!.replace(app.url, '')
    expect(next).toContain('select=title%2Cpriority')
    const second = await key.get(next)
    expect(Object.keys(second.body[0]).sort()).toEqual(['priority', 'title'])
    expect(second.body[0].title > page.body[4].title).toBe(true)

    const project = await key.post('/api/v1/projects', { name: 'Selected project' })
    await key.post('/api/v1/tasks', { title: 'In a project', project_id: project.body.id })
    const joined = await key.get('/api/v1/tasks?select=id,project_id&title=eq.In a project')
    expect(joined.body).toEqual([{ id: expect.any(String), project_id: project.body.id, project_name: 'Selected project' }])
  })

  it('answers any alias as a field of its own, __proto__ included', async () => {
    // an answer object is made by a function compiled per set of keys: this alias must not set the
    // object's prototype there (which would drop the field) but be answered like any other
    const page = await key.get('/api/v1/tasks?select=__proto__:title,id&title=eq.task 1')
    expect(page.status).toBe(200)
    expect(page.body).toHaveLength(1)
    expect(Object.keys(page.body[0])).toEqual(['__proto__', 'id'])
    expect(page.body[0]['__proto__']).toBe('task 1')
  })

  it.each([
    ['select=title,nope', 'select: "nope" is not a column of tasks'],
    ['select=', 'select: name columns separated by commas'],
    ['select=title,,priority', 'select: name columns separated by commas'],
    ['select=title;drop table tasks', 'select: "title;drop table tasks" is not supported (name columns, alias:column, or an embedded table as table(columns))'],
    ['select=title&select=priority', 'select: give it once'],
  ])('answers 400 for %s', async (query, message) => {
    const answer = await key.get(`/api/v1/tasks?${query}`)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toBe(message)
  })
})

describe('bulk create', () => {
  const countTitled = async (prefix: string) =>
    (await app.db.query(`select count(*)::int as n from public.tasks where team_id = $1 and title like $2`, [teamId, `${prefix}%`])).rows[0].n

  it('creates every record of an array in one transaction, answered in the order given and each logged', async () => {
    const body = Array.from({ length: 100 }, (_, i) => ({ title: `bulk ${String(i).padStart(3, '0')}`, priority: 1 + (i % 5) }))
    const answer = await key.post('/api/v1/tasks', body)
    expect(answer.status).toBe(201)
    expect(answer.body.map((row: Task) => row.title)).toEqual(body.map(item => item.title))
    expect(answer.body[7]).toMatchObject({ priority: 3, status: 'todo', team_id: teamId })
    expect(await countTitled('bulk ')).toBe(100)
    const { rows } = await app.db.query(`select count(*)::int as n from public.activity_log where team_id = $1 and table_name = 'tasks' and action = 'insert' and source = 'api' and new_data->>'title' like 'bulk %'`, [teamId])
    expect(rows[0].n).toBe(100)
  })

  it('writes none when one element is wrong, and names the element', async () => {
    const cases: [unknown[], string][] = [
      [[{ title: 'all or none 1' }, { title: 'all or none 2' }, {}, { title: 'all or none 3' }], '[2].title: '],
      [[{ title: 'all or none 1' }, { title: 'all or none 2', status: 'doing' }], '[1].status: '],
      [[{ title: 'all or none 1' }, 'a string'], '[1]: The record must be a JSON object'],
      [[{ title: 'all or none 1' }, { title: 'all or none \u0000' }], '[1].title: must not contain the NUL character'],
      [[{ title: 'all or none 1' }, { title: 'all or none 2', project_id: '00000000-0000-4000-8000-000000000001' }], '[1].project_id: '],
      [[{ title: 'all or none 1' }, { title: 'all or none 2', team_id: teamId }], '[1].team_id: '],
    ]
    for (const [body, message] of cases) {
      const answer = await key.post('/api/v1/tasks', body)
      expect(answer.status, message).toBe(400)
      expect(answer.body.error.startsWith(message), `${answer.body.error} starts with ${message}`).toBe(true)
    }
    expect(await countTitled('all or none')).toBe(0)
  })

  it('refuses an element that points at another team\'s project or at someone outside the team, writing none', async () => {
    const other = await teamWithRoles(app)
    const project = await other.owner.post(`/api/teams/${other.teamId}/records/projects`, { name: 'Not yours' })
    expect(project.status).toBe(201)
    const cases: [unknown[], string][] = [
      [[{ title: 'cross 1' }, { title: 'cross 2', project_id: project.body.id }], '[1].project_id: no projects record in this team has this id'],
      [[{ title: 'cross 1', assignee_id: other.owner.user!.id }, { title: 'cross 2' }], '[0].assignee_id: no member of this team has this id'],
    ]
    for (const [body, message] of cases) {
      const answer = await key.post('/api/v1/tasks', body)
      expect(answer.status, message).toBe(400)
      expect(answer.body.error).toBe(message)
    }
    expect(await countTitled('cross ')).toBe(0)
  })

  it('answers 400 for an empty array or more than 100 records', async () => {
    expect((await key.post('/api/v1/tasks', [])).body).toMatchObject({ error: 'The array must hold 1 to 100 records' })
    const tooMany = await key.post('/api/v1/tasks', Array.from({ length: 101 }, (_, i) => ({ title: `too many ${i}` })))
    expect(tooMany.status).toBe(400)
    expect(await countTitled('too many')).toBe(0)
  })
})

describe('ETag on /api/v1/{table}/{id}', () => {
  it('answers 304 for If-None-Match and 412 for a stale If-Match, writing nothing', async () => {
    const created = await key.post<Task>('/api/v1/tasks', { title: 'Versioned' })
    expect(created.status).toBe(201)
    const read = await key.get(`/api/v1/tasks/${created.body.id}`)
    const etag = read.headers.get('etag')!
    expect(etag).toMatch(/^"/)
    expect((await key.get(`/api/v1/tasks/${created.body.id}`, { 'if-none-match': etag })).status).toBe(304)
    const updated = await key.patch(`/api/v1/tasks/${created.body.id}`, { title: 'Versioned 2' }, { 'if-match': etag })
    expect(updated.status).toBe(200)
    expect(updated.headers.get('etag')).not.toBe(etag)
    const stale = await key.patch(`/api/v1/tasks/${created.body.id}`, { title: 'Lost update' }, { 'if-match': etag })
    expect(stale.status).toBe(412)
    expect(stale.body.error).toMatch(/If-Match/)
    expect((await app.db.query('select title from public.tasks where id = $1', [created.body.id])).rows[0].title).toBe('Versioned 2')
    expect((await key.delete(`/api/v1/tasks/${created.body.id}`, { 'if-match': etag })).status).toBe(412)
    expect((await key.delete(`/api/v1/tasks/${created.body.id}`, { 'if-match': updated.headers.get('etag')! })).status).toBe(204)
  })

  it('refuses an If-Match change that points at another team\'s project, naming the field and changing nothing', async () => {
    const other = await teamWithRoles(app)
    const project = await other.owner.post(`/api/teams/${other.teamId}/records/projects`, { name: 'Still not yours' })
    expect(project.status).toBe(201)
    const created = await key.post<Task>('/api/v1/tasks', { title: 'Guarded' })
    const etag = (await key.get(`/api/v1/tasks/${created.body.id}`)).headers.get('etag')!
    const answer = await key.patch(`/api/v1/tasks/${created.body.id}`, { title: 'Moved', project_id: project.body.id }, { 'if-match': etag })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toBe('project_id: no projects record in this team has this id')
    const after = await key.get<Task & { project_id: string | null }>(`/api/v1/tasks/${created.body.id}`)
    expect(after.body).toMatchObject({ title: 'Guarded', project_id: null })
    expect(after.headers.get('etag')).toBe(etag)
  })

  it('of concurrent writers holding the same ETag, exactly one writes and the others get 412', async () => {
    const created = await key.post<Task>('/api/v1/tasks', { title: 'Contended' })
    const etag = (await key.get(`/api/v1/tasks/${created.body.id}`)).headers.get('etag')!
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      key.patch(`/api/v1/tasks/${created.body.id}`, { title: `Writer ${i}` }, { 'if-match': etag })))
    const statuses = answers.map(a => a.status).sort()
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412])
    const winner = answers.find(a => a.status === 200)!.body.title
    expect((await app.db.query('select title from public.tasks where id = $1', [created.body.id])).rows[0].title).toBe(winner)
    const { rows } = await app.db.query(`select count(*)::int as n from public.activity_log where record_id = $1 and action = 'update'`, [created.body.id])
    expect(rows[0].n).toBe(1)
  })
})
