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
      path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null
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
    ['priority=eq.1 or 1=1', /is not a valid integer/],
    ['status=eq.open\'--', /is not a valid value/],
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
})
