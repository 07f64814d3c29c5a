import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { teamWithRoles, type TeamFixture } from '../support/http'

let app: TestApp
let fx: TeamFixture
let other: TeamFixture
let projectId: string
beforeAll(async () => {
  app = await startApp()
  fx = await teamWithRoles(app)
  other = await teamWithRoles(app)
  projectId = (await fx.owner.post(`/api/teams/${fx.teamId}/records/projects`, { name: 'Apollo' })).body.id
})
afterAll(() => app?.stop())

const records = (table: string, id?: string) => `/api/teams/${fx.teamId}/records/${table}${id ? `/${id}` : ''}`

describe('GET /api/teams/{teamId}/tables', () => {
  it('describes the domain tables with columns, allowed values, foreign keys, comments and the caller\'s actions', async () => {
    const answer = await fx.member.get(`/api/teams/${fx.teamId}/tables`)
    expect(answer.status).toBe(200)
    expect(answer.body.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['notes', 'projects', 'tasks']))
    expect(answer.body.map((t: { name: string }) => t.name)).not.toContain('api_keys')
    const tasks = answer.body.find((t: { name: string }) => t.name === 'tasks')
    expect(tasks).toMatchObject({ comment: expect.stringContaining('unit of work'), title_column: 'title', actions: { view: true, create: true, update: true, delete: false } })
    const column = (name: string) => tasks.columns.find((c: { name: string }) => c.name === name)
    expect(column('status')).toMatchObject({ allowed_values: ['todo', 'in_progress', 'done'], is_writable: true, is_required: false, comment: expect.stringContaining('todo') })
    expect(column('title')).toMatchObject({ type: 'text', is_required: true, nullable: false })
    expect(column('project_id')).toMatchObject({ references: { table: 'projects', column: 'id' }, name_field: 'project_name' })
    expect(column('assignee_id')).toMatchObject({ references: { table: 'profiles', column: 'id' }, name_field: 'assignee_name' })
    expect(column('due_date')).toMatchObject({ schema: { format: 'date' } })
    expect(column('team_id')).toMatchObject({ is_writable: false })
    const asAdmin = await fx.admin.get(`/api/teams/${fx.teamId}/tables`)
    expect(asAdmin.body.find((t: { name: string }) => t.name === 'tasks').actions.delete).toBe(true)
  })

  it('answers 401 signed out and 404 outside the team', async () => {
    expect((await fx.anonymous.get(`/api/teams/${fx.teamId}/tables`)).status).toBe(401)
    expect((await fx.outsider.get(`/api/teams/${fx.teamId}/tables`)).status).toBe(404)
  })
})

describe('session record routes', () => {
  it('creates, reads, lists, changes and deletes a record, each write logged with source web', async () => {
    const created = await fx.member.post(records('tasks'), { title: 'Write the report', project_id: projectId, assignee_id: fx.member.user!.id, due_date: '2026-03-01' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ title: 'Write the report', team_id: fx.teamId, created_by: fx.member.user!.id, project_name: 'Apollo', assignee_name: 'Mia Member', status: 'todo' })
    const id = created.body.id
    const one = await fx.member.get(records('tasks', id))
    expect(one.status).toBe(200)
    expect(one.body).toEqual(created.body)
    const list = await fx.member.get(records('tasks'))
    expect(list.status).toBe(200)
    expect(list.body.map((r: { id: string }) => r.id)).toContain(id)
    const changed = await fx.member.patch(records('tasks', id), { status: 'in_progress' })
    expect(changed.status).toBe(200)
    expect(changed.body.status).toBe('in_progress')
    const deleted = await fx.admin.delete(records('tasks', id))
    expect(deleted.status).toBe(204)
    expect((await fx.member.get(records('tasks', id))).status).toBe(404)

    const history = await fx.owner.get(`/api/teams/${fx.teamId}/activity?record_id=${id}`)
    expect(history.body.entries.map((e: { action: string, source: string, actor_id: string }) => [e.action, e.source, e.actor_id])).toEqual([
      ['delete', 'web', fx.admin.user!.id],
      ['update', 'web', fx.member.user!.id],
      ['insert', 'web', fx.member.user!.id],
    ])
    expect(history.body.entries[1].old_data).toEqual({ status: 'todo', ...(history.body.entries[1].old_data.updated_at ? { updated_at: expect.any(String) } : {}) })
  })

  it('checks the role per action: a member may not delete', async () => {
    const id = (await fx.member.post(records('notes'), { title: 'Keep me' })).body.id
    const answer = await fx.member.delete(records('notes', id))
    expect(answer.status).toBe(403)
    expect(answer.body.error).toMatch(/notes\.delete/)
    const { rows } = await app.db.query('select count(*)::int as n from public.notes where id = $1', [id])
    expect(rows[0].n).toBe(1)
  })

  it('validates like the public API: 400 naming the field, nothing written', async () => {
    const before = (await app.db.query('select count(*)::int as n from public.tasks')).rows[0].n
    const cases: [unknown, RegExp][] = [
      [{ title: 'x', status: 'someday' }, /^status:/],
      [{ title: 'x', team_id: other.teamId }, /^team_id: is a system column/],
      [{ title: 'x', colour: 'red' }, /^colour: is not a column of tasks/],
      [{}, /^title:/],
      [{ title: 'x', priority: 9 }, /priority/],
      [{ title: 'x', assignee_id: other.owner.user!.id }, /^assignee_id: no member of this team/],
    ]
    for (const [body, message] of cases) {
      const answer = await fx.member.post(records('tasks'), body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(answer.body.error).toMatch(message)
    }
    expect((await app.db.query('select count(*)::int as n from public.tasks')).rows[0].n).toBe(before)
  })

  it('answers 404 for unknown and system tables, malformed ids and records of another team', async () => {
    expect((await fx.member.get(records('api_keys'))).status).toBe(404)
    expect((await fx.member.get(records('activity_log'))).status).toBe(404)
    expect((await fx.member.get(records('nope'))).status).toBe(404)
    expect((await fx.member.get(records('tasks', 'not-a-uuid'))).status).toBe(404)
    const theirs = (await other.owner.post(`/api/teams/${other.teamId}/records/projects`, { name: 'Secret' })).body.id
    expect((await fx.owner.get(records('projects', theirs))).status).toBe(404)
    expect((await fx.owner.patch(records('projects', theirs), { name: 'Mine' })).status).toBe(404)
    expect((await fx.owner.delete(records('projects', theirs))).status).toBe(404)
    expect((await fx.outsider.get(records('projects'))).status).toBe(404)
    expect((await fx.anonymous.get(records('projects'))).status).toBe(401)
    const { rows } = await app.db.query('select name from public.projects where id = $1', [theirs])
    expect(rows[0].name).toBe('Secret')
  })
})

describe('GET /api/teams/{teamId}/overview', () => {
  it('counts the records of each table, tasks by status, and shows the latest changes the role may see', async () => {
    await fx.member.post(records('tasks'), { title: 'Overview task', status: 'in_progress' })
    const counts = await app.db.query(`select status, count(*)::int as n from public.tasks where team_id = $1 group by status`, [fx.teamId])
    const asAdmin = await fx.admin.get(`/api/teams/${fx.teamId}/overview`)
    expect(asAdmin.status).toBe(200)
    const total = counts.rows.reduce((sum: number, row: { n: number }) => sum + row.n, 0)
    expect(asAdmin.body.counts).toContainEqual({ table: 'tasks', count: total })
    const tasks = asAdmin.body.by_status.find((s: { table: string }) => s.table === 'tasks')
    expect(tasks.counts.map((c: { value: string }) => c.value)).toEqual(['todo', 'in_progress', 'done'])
    for (const row of counts.rows) expect(tasks.counts).toContainEqual({ value: row.status, count: row.n })
    expect(asAdmin.body.latest[0]).toMatchObject({ table_name: 'tasks', record_title: 'Overview task', actor_name: 'Mia Member' })
    expect(asAdmin.body.writes_by_day).toHaveLength(14)
    const today = asAdmin.body.writes_by_day.at(-1)
    expect(today.web).toBeGreaterThan(0)

    await fx.owner.patch(`/api/teams/${fx.teamId}`, { name: 'Renamed for the overview' })
    const asMember = await fx.member.get(`/api/teams/${fx.teamId}/overview`)
    expect(asMember.body.writes_by_day).toBeNull()
    // a member sees the changes to the data, not to the team's settings
    expect(asMember.body.latest.every((e: { table_name: string }) => ['projects', 'tasks', 'notes'].includes(e.table_name))).toBe(true)
    expect(asMember.body.latest[0].record_title).toBe('Overview task')
    expect((await fx.outsider.get(`/api/teams/${fx.teamId}/overview`)).status).toBe(404)
  })
})

describe('filters, order, cursors, counts and ETags on the session routes', () => {
  let listTeam: TeamFixture
  const path = (query = '') => `/api/teams/${listTeam.teamId}/records/tasks${query}`
  beforeAll(async () => {
    listTeam = await teamWithRoles(app)
    const statuses = ['todo', 'in_progress', 'done'] as const
    for (let i = 0; i < 30; i++) {
      const status = statuses[i % 3]!
      const answer = await listTeam.owner.post(path(), {
        title: `Task ${String(i).padStart(2, '0')}`,
        status,
        priority: 1 + (i % 5),
        due_date: i % 4 === 0 ? null : `2026-02-${String(1 + (i % 28)).padStart(2, '0')}`,
        ...(status === 'done' ? { completed_at: '2026-01-31T12:00:00Z' } : {}),
      })
      expect(answer.status).toBe(201)
    }
  })

  it('filters with the public API operators and counts the matches', async () => {
    const todo = await listTeam.member.get(path('?status=eq.todo&limit=100'), { prefer: 'count=exact' })
    expect(todo.status).toBe(200)
    expect(todo.body).toHaveLength(10)
    expect(todo.headers.get('content-range')).toBe('0-9/10')
    expect(todo.headers.get('preference-applied')).toBe('count=exact')
    const several = await listTeam.member.get(path('?status=in.(todo,done)&priority=lte.2&title=ilike.*task*&limit=100'))
    expect(several.body.length).toBeGreaterThan(0)
    expect(several.body.every((t: { status: string, priority: number }) => ['todo', 'done'].includes(t.status) && t.priority <= 2)).toBe(true)
    const noDue = await listTeam.member.get(path('?due_date=is.null&limit=100'))
    expect(noDue.body).toHaveLength(8)
    const notTodo = await listTeam.member.get(path('?status=not.eq.todo&limit=100'))
    expect(notTodo.body).toHaveLength(20)
    const range = await listTeam.member.get(path('?due_date=gte.2026-02-10&due_date=lt.2026-02-20&limit=100'))
    expect(range.body.every((t: { due_date: string }) => t.due_date >= '2026-02-10' && t.due_date < '2026-02-20')).toBe(true)
  })

  it('orders, and pages with a signed cursor that keeps filters and order', async () => {
    const seen: string[] = []
    let next: string | null = path('?status=neq.done&order=priority.asc,title.desc&limit=7')
    let pages = 0
    while (next) {
      const answer = await listTeam.member.get(next, { prefer: 'count=exact' })
      expect(answer.status).toBe(200)
      seen.push(...answer.body.map((t: { title: string }) => t.title))
      expect(answer.headers.get('content-range')).toMatch(new RegExp(`^${seen.length - answer.body.length}-${seen.length - 1}/20$`))
      const link = answer.headers.get('link')
      next = link ? /<([^>]+)>; rel="next"/.exec(link)![1]!.replace(app.url, '') : null
      pages++
    }
    expect(pages).toBe(3)
    const all = (await listTeam.member.get(path('?status=neq.done&limit=100'))).body as { title: string, priority: number }[]
    const expected = [...all].sort((a, b) => a.priority - b.priority || b.title.localeCompare(a.title)).map(t => t.title)
    expect(seen).toEqual(expected)
  })

  it('answers 400 naming the problem for bad filters, orders and cursors', async () => {
    const cases: [string, RegExp][] = [
      ['?colour=eq.red', /^colour: is not a column of tasks/],
      ['?status=eq.someday', /^status: must be one of: todo, in_progress, done \("someday" is not\)/],
      ['?priority=gt.high', /^priority: must be an integer \("high" is not\)/],
      ['?status=between.a', /^status: unknown operator/],
      ['?order=colour.asc', /^order: colour is not a column/],
      ['?order=title.sideways', /^order: title.sideways must be/],
      ['?limit=0', /^limit:/],
      ['?cursor=abc.def', /^cursor: is not valid/],
      ['?cursor=abc.def&offset=3', /^cursor: give a cursor or an offset/],
    ]
    for (const [query, message] of cases) {
      const answer = await listTeam.member.get(path(query))
      expect(answer.status, query).toBe(400)
      expect(answer.body.error).toMatch(message)
    }
    // a cursor made for one filter is refused for another
    const first = await listTeam.member.get(path('?status=eq.todo&limit=2'))
    const cursor = new URL(/<([^>]+)>/.exec(first.headers.get('link')!)![1]!, app.url).searchParams.get('cursor')!
    const forged = await listTeam.member.get(path(`?status=eq.done&limit=2&cursor=${encodeURIComponent(cursor)}`))
    expect(forged.status).toBe(400)
  })

  it('gives ETags, answers 304 for If-None-Match and 412 for a stale If-Match, writing nothing', async () => {
    const task = (await listTeam.member.get(path('?limit=1'))).body[0]
    const one = await listTeam.member.get(path(`/${task.id}`))
    const etag = one.headers.get('etag')!
    expect(etag).toMatch(/^"[\w-]+"$/)
    expect((await listTeam.member.get(path(`/${task.id}`), { 'if-none-match': etag })).status).toBe(304)
    const priority = task.priority === 5 ? 4 : 5
    const changed = await listTeam.member.patch(path(`/${task.id}`), { priority }, { 'if-match': etag })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    const stale = await listTeam.admin.patch(path(`/${task.id}`), { title: 'Late edit' }, { 'if-match': etag })
    expect(stale.status).toBe(412)
    expect(stale.body.error).toMatch(/changed since you read it/)
    expect((await listTeam.admin.delete(path(`/${task.id}`), { 'if-match': etag })).status).toBe(412)
    const { rows } = await app.db.query('select title, priority from public.tasks where id = $1', [task.id])
    expect(rows[0]).toEqual({ title: task.title, priority })
    expect((await listTeam.admin.delete(path(`/${task.id}`), { 'if-match': changed.headers.get('etag')! })).status).toBe(204)
  })
})
