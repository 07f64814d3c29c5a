// The public API speaks PostgREST: the real supabase-js and postgrest-js, pointed at the built app
// with a team key, get what they would get from PostgREST, inside the key's team and scopes.
// Each test asserts what the client hands its caller (data, count, error) and the rows.
import { PostgrestClient } from '@supabase/postgrest-js'
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, createTeam, signUp, teamWithRoles, type Client } from '../support/http'

let app: TestApp
let owner: Client
let teamId: string
let otherTeamId: string
let key: string
let supabase: SupabaseClient
/** postgrest-js on /api/v1 with the key as a bearer token only. */
let postgrest: PostgrestClient
let launchId: string
let archiveId: string
let otherTaskId: string

type Task = { id: string, title: string, status: string, priority: number, project_id: string | null, due_date: string | null }

const rowCount = async (sql: string, params: unknown[]) => (await app.db.query<{ n: number }>(sql, params)).rows[0]!.n

async function newKey(client: Client, team: string, scopes?: Record<string, string>): Promise<string> {
  const answer = await client.post(`/api/teams/${team}/api-keys`, scopes ? { name: 'PostgREST client', scopes } : { name: 'PostgREST client' })
  expect(answer.status).toBe(201)
  return answer.body.key
}

// Node 20 has no WebSocket of its own, which supabase-js's realtime client asks for at creation;
// these tests open no realtime channel, so a stand-in that is never connected will do
class NoWebSocket {
  readonly readyState = 3
}
const supabaseWith = (apiKey: string) => createClient(app.url, apiKey, {
  auth: { persistSession: false, autoRefreshToken: false },
  realtime: { transport: NoWebSocket as never },
})

beforeAll(async () => {
  app = await startApp()
  const team = await teamWithRoles(app)
  owner = team.owner
  teamId = team.teamId
  key = await newKey(owner, teamId)
  supabase = supabaseWith(key)
  postgrest = new PostgrestClient(`${app.url}/api/v1`, { headers: { Authorization: `Bearer ${key}` } })
  const ownerId = owner.user!.id
  const projects = await app.db.query<{ id: string }>(
    `insert into public.projects (team_id, created_by, name, status) values ($1, $2, 'Launch', 'active'), ($1, $2, 'Archive', 'archived') returning id`,
    [teamId, ownerId])
  launchId = projects.rows[0]!.id
  archiveId = projects.rows[1]!.id
  await app.db.query(
    `insert into public.tasks (team_id, created_by, title, priority, status, completed_at, project_id, due_date, created_at)
     values ($1, $2, 'Plan the launch party', 1, 'todo', null, $3, '2026-03-01', now() - interval '1 minute'),
            ($1, $2, 'Write launch notes', 2, 'in_progress', null, $3, null, now() - interval '2 minutes'),
            ($1, $2, 'File 100% of receipts', 3, 'done', now(), $4, '2026-01-15', now() - interval '3 minutes'),
            ($1, $2, 'Water the plants', 5, 'todo', null, null, null, now() - interval '4 minutes')`,
    [teamId, ownerId, launchId, archiveId])
  // another team with a task of its own, never reachable with this team's key
  const outsider = await signUp(app, { name: 'Other Owner' })
  otherTeamId = await createTeam(outsider, 'Other team')
  const other = await app.db.query<{ id: string }>(
    `insert into public.tasks (team_id, created_by, title) values ($1, $2, 'Launch secret plan') returning id`, [otherTeamId, outsider.user!.id])
  otherTaskId = other.rows[0]!.id
})
afterAll(() => app?.stop())

describe('reading with supabase-js and postgrest-js', () => {
  it('select("*") answers every row of the team, with an exact count', async () => {
    const { data, error, count, status } = await supabase.from('tasks').select('*', { count: 'exact' }).order('title')
    expect(error).toBeNull()
    expect(status).toBe(200)
    expect(count).toBe(4)
    expect((data as Task[]).map(t => t.title)).toEqual(['File 100% of receipts', 'Plan the launch party', 'Water the plants', 'Write launch notes'])
    expect(data![0]).toMatchObject({ id: expect.any(String), status: 'done', priority: 3, project_name: 'Archive' })
  })

  it('renames columns and embeds related tables in both directions, only the team\'s rows', async () => {
    const { data, error } = await postgrest.from('tasks').select('id, name:title, project:projects(name, status)').eq('priority', 1)
    expect(error).toBeNull()
    expect(data).toEqual([{ id: expect.any(String), name: 'Plan the launch party', project: { name: 'Launch', status: 'active' } }])
    const projects = await supabase.from('projects').select('name, tasks(title)').order('name')
    expect(projects.error).toBeNull()
    expect(projects.data).toEqual([
      { name: 'Archive', tasks: [{ title: 'File 100% of receipts' }] },
      { name: 'Launch', tasks: [{ title: 'Plan the launch party' }, { title: 'Write launch notes' }] },
    ])
    // an embedded profile shows only its id and name
    const creator = await supabase.from('tasks').select('title, creator:profiles!created_by(*)').eq('priority', 1).single()
    expect(creator.error).toBeNull()
    expect(creator.data).toEqual({ title: 'Plan the launch party', creator: { id: owner.user!.id, name: 'Olive Owner' } })
  })

  it('filters with or, nested and, not, like with % or *, ilike and full-text search', async () => {
    const titles = async (query: PromiseLike<{ data: unknown, error: unknown }>) => {
      const { data, error } = await query
      expect(error).toBeNull()
      return (data as Task[]).map(t => t.title).sort()
    }
    expect(await titles(supabase.from('tasks').select('title').or('priority.eq.1,and(status.eq.done,priority.gte.3)')))
      .toEqual(['File 100% of receipts', 'Plan the launch party'])
    expect(await titles(supabase.from('tasks').select('title').not('status', 'eq', 'todo')))
      .toEqual(['File 100% of receipts', 'Write launch notes'])
    expect(await titles(supabase.from('tasks').select('title').like('title', '%launch%'))).toEqual(['Plan the launch party', 'Write launch notes'])
    expect(await titles(supabase.from('tasks').select('title').ilike('title', '*LAUNCH*'))).toEqual(['Plan the launch party', 'Write launch notes'])
    expect(await titles(supabase.from('tasks').select('title').textSearch('title', 'launch & party', { config: 'english' })))
      .toEqual(['Plan the launch party'])
    expect(await titles(supabase.from('tasks').select('title').textSearch('title', 'launch notes', { type: 'plain' })))
      .toEqual(['Write launch notes'])
    expect(await titles(supabase.from('tasks').select('title').textSearch('title', '"write launch"', { type: 'websearch' })))
      .toEqual(['Write launch notes'])
  })

  it('orders with nullsFirst and pages through it with cursors', async () => {
    const first = await supabase.from('tasks').select('title, due_date').order('due_date', { ascending: true, nullsFirst: true })
    expect(first.error).toBeNull()
    expect(first.data!.map(t => t.due_date)).toEqual([null, null, '2026-01-15', '2026-03-01'])
    const last = await supabase.from('tasks').select('title, due_date').order('due_date', { ascending: false, nullsFirst: false })
    expect(last.data!.map(t => t.due_date)).toEqual(['2026-03-01', '2026-01-15', null, null])
    // the Link of a full page carries a cursor that keeps the nulls where the order puts them
    const key_ = new KeyClient(app, key)
    const seen: string[] = []
    let path: string | null = '/rest/v1/tasks?select=title&order=due_date.asc.nullsfirst,title.asc&limit=1'
    while (path) {
      const page = await key_.get<{ title: string }[]>(path)
      expect(page.status).toBe(200)
      seen.push(...page.body.map(t => t.title))
      const link = page.headers.get('link')
      path = link ? new URL(/^<([^>]+)>/.exec(link)![1]!).pathname + new URL(/^<([^>]+)>/.exec(link)![1]!).search : null
      if (link) expect(link).toMatch(new RegExp(`^<${app.url}/rest/v1/tasks\\?`))
    }
    expect(seen).toEqual(['Water the plants', 'Write launch notes', 'File 100% of receipts', 'Plan the launch party'])
  })

  it('serves a limit over 100 as 100 and counts planned, estimated and with head: true', async () => {
    await app.db.query(`insert into public.notes (team_id, created_by, title) select $1, $2, 'note ' || i from generate_series(1, 120) i`, [teamId, owner.user!.id])
    const big = await supabase.from('notes').select('title', { count: 'exact' }).limit(500)
    expect(big.error).toBeNull()
    expect(big.data).toHaveLength(100)
    expect(big.count).toBe(120)
    const planned = await supabase.from('notes').select('title', { count: 'planned' }).limit(1)
    expect(planned.error).toBeNull()
    expect(planned.count).toEqual(expect.any(Number))
    const estimated = await supabase.from('notes').select('title', { count: 'estimated' }).limit(1)
    expect(estimated.count).toBe(120)
    const head = await supabase.from('notes').select('*', { count: 'exact', head: true }).like('title', 'note 1%')
    expect(head.error).toBeNull()
    expect(head.data).toBeNull()
    expect(head.count).toBe(32)
    const range = await supabase.from('notes').select('title').order('title').range(10, 14)
    expect(range.data).toHaveLength(5)
  })

  it('answers one object for single(), an error for 0 or several rows, and CSV for csv()', async () => {
    const one = await supabase.from('projects').select('name').eq('id', launchId).single()
    expect(one.error).toBeNull()
    expect(one.data).toEqual({ name: 'Launch' })
    const several = await supabase.from('tasks').select('title').single()
    expect(several.data).toBeNull()
    expect(several.status).toBe(406)
    expect(several.error).toMatchObject({ code: 'PGRST116', message: 'JSON object requested, multiple (or no) rows returned', details: 'The result contains 4 rows' })
    const none = await supabase.from('tasks').select('title').eq('title', 'nothing').maybeSingle()
    expect(none).toMatchObject({ data: null, error: null })
    const csv = await supabase.from('projects').select('name,status').order('name').csv()
    expect(csv.error).toBeNull()
    expect(csv.data).toBe('name,status\nArchive,archived\nLaunch,active')
  })
})

describe('writing with supabase-js', () => {
  it('insert answers the object as before, insert().select() an array of the chosen columns', async () => {
    const plain = await supabase.from('tasks').insert({ title: 'Plain insert' })
    expect(plain.error).toBeNull()
    expect(plain.status).toBe(201)
    expect(plain.data).toMatchObject({ title: 'Plain insert', status: 'todo' })
    const selected = await supabase.from('tasks').insert([{ title: 'Selected insert', project_id: launchId }]).select('title, project:projects(name)')
    expect(selected.error).toBeNull()
    expect(selected.data).toEqual([{ title: 'Selected insert', project: { name: 'Launch' } }])
    const single = await supabase.from('tasks').insert({ title: 'Single insert' }).select('title').single()
    expect(single.data).toEqual({ title: 'Single insert' })
    expect(await rowCount(`select count(*)::int as n from public.activity_log where team_id = $1 and table_name = 'tasks' and action = 'insert' and new_data->>'title' in ('Plain insert', 'Selected insert', 'Single insert')`, [teamId])).toBe(3)
  })

  it('upserts by id: merge changes the team\'s row, ignore leaves it, another team\'s id is only "taken"', async () => {
    const created = await supabase.from('projects').insert({ name: 'Upsert me' }).select('id').single()
    const id = (created.data as { id: string }).id
    const merged = await supabase.from('projects').upsert({ id, name: 'Upserted', status: 'archived' }).select('id, name, status')
    expect(merged.error).toBeNull()
    expect(merged.data).toEqual([{ id, name: 'Upserted', status: 'archived' }])
    const ignored = await supabase.from('projects').upsert({ id, name: 'Ignored' }, { ignoreDuplicates: true }).select('name')
    expect(ignored.error).toBeNull()
    expect(ignored.data).toEqual([])
    expect((await app.db.query('select name from public.projects where id = $1', [id])).rows[0].name).toBe('Upserted')
    const fresh = await supabase.from('projects').upsert({ name: 'Brand new' }, { onConflict: 'id' }).select('name')
    expect(fresh.data).toEqual([{ name: 'Brand new' }])
    // another team's id: refused without changing, showing or waiting for that row
    const stolen = await supabase.from('tasks').upsert({ id: otherTaskId, title: 'Hijacked' }).select()
    expect(stolen.data).toBeNull()
    expect(stolen.status).toBe(409)
    expect(stolen.error).toMatchObject({ code: '23505', message: `id: ${otherTaskId} is taken` })
    expect(JSON.stringify(stolen.error)).not.toContain('Launch secret plan')
    const ignoredStolen = await supabase.from('tasks').upsert({ id: otherTaskId, title: 'Hijacked' }, { ignoreDuplicates: true })
    expect(ignoredStolen.status).toBe(409)
    const row = (await app.db.query('select title, team_id from public.tasks where id = $1', [otherTaskId])).rows[0]
    expect(row).toEqual({ title: 'Launch secret plan', team_id: otherTeamId })
    const badColumn = await supabase.from('projects').upsert({ name: 'x' }, { onConflict: 'name' })
    expect(badColumn.error).toMatchObject({ code: '42P10' })
  })

  it('updates and deletes the rows a filter matches, each with its activity entry', async () => {
    await supabase.from('tasks').insert([{ title: 'bulk a', priority: 4 }, { title: 'bulk b', priority: 4 }, { title: 'bulk c', priority: 5 }])
    const updated = await supabase.from('tasks').update({ status: 'in_progress' }).like('title', 'bulk%').eq('priority', 4).select('title, status').order('title')
    expect(updated.error).toBeNull()
    expect(updated.data).toEqual([{ title: 'bulk a', status: 'in_progress' }, { title: 'bulk b', status: 'in_progress' }])
    const quiet = await supabase.from('tasks').update({ priority: 1 }, { count: 'exact' }).eq('title', 'bulk c')
    expect(quiet).toMatchObject({ error: null, data: null, count: 1, status: 204 })
    expect(await rowCount(`select count(*)::int as n from public.activity_log where team_id = $1 and table_name = 'tasks' and action = 'update' and source = 'api' and new_data->>'title' like 'bulk %'`, [teamId])).toBe(3)
    const deleted = await supabase.from('tasks').delete().like('title', 'bulk%').select('title')
    expect(deleted.error).toBeNull()
    expect((deleted.data as { title: string }[]).map(t => t.title).sort()).toEqual(['bulk a', 'bulk b', 'bulk c'])
    expect(await rowCount(`select count(*)::int as n from public.tasks where team_id = $1 and title like 'bulk%'`, [teamId])).toBe(0)
    expect(await rowCount(`select count(*)::int as n from public.activity_log where team_id = $1 and table_name = 'tasks' and action = 'delete' and old_data->>'title' like 'bulk %'`, [teamId])).toBe(3)
  })

  it('refuses a write without a filter, over 100 rows or over max-affected, changing nothing', async () => {
    const unfiltered = await supabase.from('notes').update({ body: 'everything' })
    expect(unfiltered.status).toBe(400)
    expect(unfiltered.error).toMatchObject({ code: 'PGRST100', message: expect.stringContaining('needs a filter') })
    const tooMany = await supabase.from('notes').delete().like('title', 'note%')
    expect(tooMany.status).toBe(400)
    expect(tooMany.error).toMatchObject({ code: 'PGRST124', message: expect.stringContaining('More than 100') })
    const strict = supabase.from('notes').update({ body: 'two' }).in('title', ['note 1', 'note 2'])
    const limited = await (strict as unknown as { maxAffected(rows: number): typeof strict }).maxAffected(1)
    expect(limited.error).toMatchObject({ code: 'PGRST124' })
    expect(await rowCount(`select count(*)::int as n from public.notes where team_id = $1 and body is not null`, [teamId])).toBe(0)
    expect(await rowCount(`select count(*)::int as n from public.notes where team_id = $1`, [teamId])).toBe(120)
  })

  it('runs a write under rollback() and keeps nothing', async () => {
    const dry = await supabase.from('tasks').insert({ title: 'Dry run' }).select('title').rollback()
    expect(dry.error).toBeNull()
    expect(dry.data).toEqual([{ title: 'Dry run' }])
    const dryUpdate = await supabase.from('projects').update({ name: 'Renamed' }).eq('id', launchId).select('name').rollback()
    expect(dryUpdate.data).toEqual([{ name: 'Renamed' }])
    expect(await rowCount(`select count(*)::int as n from public.tasks where team_id = $1 and title = 'Dry run'`, [teamId])).toBe(0)
    expect((await app.db.query('select name from public.projects where id = $1', [launchId])).rows[0].name).toBe('Launch')
    expect(await rowCount(`select count(*)::int as n from public.activity_log where team_id = $1 and (new_data->>'title' = 'Dry run' or new_data->>'name' = 'Renamed')`, [teamId])).toBe(0)
  })
})

describe('errors and what a key may not reach', () => {
  it('gives PostgREST\'s error fields, so throwOnError() throws a message', async () => {
    const missing = await supabase.from('nope').select('*')
    expect(missing.status).toBe(404)
    expect(missing.error).toMatchObject({ code: 'PGRST205', message: expect.stringContaining('nope'), details: null, hint: null })
    await expect(supabase.from('tasks').select('nope').throwOnError()).rejects.toThrow(/"nope" is not a column of tasks/)
    const rpc = await supabase.rpc('anything', { a: 1 })
    expect(rpc.status).toBe(404)
    expect(rpc.error).toMatchObject({ code: 'PGRST202' })
    const invalid = await supabase.from('tasks').insert({ title: 'x', priority: 9 })
    expect(invalid.error).toMatchObject({ code: '23514', message: expect.stringMatching(/^priority: /) })
    const compound = await supabase.from('tasks').insert({ title: 'x', status: 'done' })
    expect(compound.error).toMatchObject({ code: '23514', message: 'status, completed_at: a done task must have completed_at (violates tasks_done_has_completed_at)' })
  })

  it('refuses an embed of a table the key may not read, and an unknown relation', async () => {
    const tasksOnly = supabaseWith(await newKey(owner, teamId, { tasks: 'write' }))
    const embed = await tasksOnly.from('tasks').select('title, projects(name)')
    expect(embed.status).toBe(403)
    expect(embed.error).toMatchObject({ code: '42501', message: expect.stringContaining('may not read projects') })
    const system = await supabase.from('tasks').select('title, team:teams(name)')
    expect(system.error).toMatchObject({ code: 'PGRST200' })
    const keys = await supabase.from('tasks').select('title, api_keys(*)')
    expect(keys.error).toMatchObject({ code: 'PGRST200' })
  })

  it('keeps filters, bodies and embeds inside the team, whatever team_id they name', async () => {
    const byTeam = await supabase.from('tasks').select('title').eq('team_id', otherTeamId)
    expect(byTeam).toMatchObject({ error: null, data: [] })
    const everything = await supabase.from('tasks').select('title').or(`team_id.eq.${otherTeamId},title.like.*`)
    expect((everything.data as Task[]).map(t => t.title)).not.toContain('Launch secret plan')
    const body = await supabase.from('tasks').insert({ title: 'moved', team_id: otherTeamId })
    expect(body.error).toMatchObject({ message: 'team_id: is a system column and cannot be set' })
    const update = await supabase.from('tasks').update({ title: 'Hijacked' }).eq('id', otherTaskId).select()
    expect(update).toMatchObject({ error: null, data: [] })
    const remove = await supabase.from('tasks').delete().eq('id', otherTaskId).select()
    expect(remove).toMatchObject({ error: null, data: [] })
    // a filter that matches every row changes only this team's rows
    const all = await supabase.from('tasks').update({ due_date: '2027-01-01' }).not('id', 'is', null).select('id')
    expect(all.error).toBeNull()
    expect(await rowCount(`select count(*)::int as n from public.tasks where due_date = '2027-01-01' and team_id <> $1`, [teamId])).toBe(0)
    expect(await rowCount(`select count(*)::int as n from public.tasks where due_date = '2027-01-01' and team_id = $1`, [teamId])).toBe((all.data as unknown[]).length)
    expect((await app.db.query('select title from public.tasks where id = $1', [otherTaskId])).rows[0].title).toBe('Launch secret plan')
  })

  it.each([
    ['select=title;drop table tasks', /select:/],
    ['select=title,"tasks"(*)', /select:/],
    ['select=x:projects!inner(name)', /relationship|select:/],
    ['order=title;drop table tasks', /order:/],
    ['or=(title.eq.a);drop table tasks', /or:/],
    ['title=fts(english\');drop table tasks).x', /unknown operator/],
    ['or=(title.eq.a,team_id.eq.x)', /team_id: must be a uuid \("x" is not\)/],
  ])('answers 400 for %s and changes nothing', async (query, message) => {
    const answer = await new KeyClient(app, key).get(`/rest/v1/tasks?${query.replace(/ /g, '%20').replace(/;/g, '%3B')}`)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
    expect(answer.body.message).toBe(answer.body.error)
    expect(Object.keys(answer.body).sort()).toEqual(['code', 'details', 'error', 'hint', 'message', 'request_id'])
    expect(await rowCount('select count(*)::int as n from public.tasks where team_id = $1', [teamId])).toBeGreaterThan(0)
  })
})

describe('the protocol over plain HTTP', () => {
  it('takes the key in an apikey header alone, on /rest/v1', async () => {
    const client = new PostgrestClient(`${app.url}/rest/v1`, { headers: { apikey: key } })
    const { data, error } = await client.from('projects').select('name').eq('id', archiveId)
    expect(error).toBeNull()
    expect(data).toEqual([{ name: 'Archive' }])
  })

  it('answers Content-Range on every list, 406 for an Accept it cannot produce, ETag on POST, and rpc 404s', async () => {
    const http = new KeyClient(app, key)
    const list = await http.get('/api/v1/tasks?select=title&limit=2&offset=1')
    expect(list.headers.get('content-range')).toBe('1-2/*')
    const empty = await http.get('/api/v1/tasks?title=eq.none', { prefer: 'count=exact' })
    expect(empty.headers.get('content-range')).toBe('*/0')
    const xml = await http.get('/api/v1/tasks', { accept: 'application/xml' })
    expect(xml.status).toBe(406)
    expect(xml.body).toMatchObject({ code: 'PGRST107' })
    const created = await http.post('/api/v1/projects', { name: 'With ETag' })
    expect(created.status).toBe(201)
    const read = await http.get(`/api/v1/projects/${created.body.id}`)
    expect(created.headers.get('etag')).toBe(read.headers.get('etag'))
    const minimal = await http.post('/api/v1/projects', { name: 'Minimal' }, { prefer: 'return=minimal' })
    expect(minimal.status).toBe(201)
    expect(minimal.body).toBeNull()
    for (const path of ['/api/v1/rpc/anything', '/rest/v1/rpc/anything']) {
      const rpc = await http.post(path, {})
      expect(rpc.status).toBe(404)
      expect(rpc.body).toMatchObject({ code: 'PGRST202' })
    }
    const dryById = await http.patch(`/api/v1/projects/${created.body.id}`, { name: 'x' }, { prefer: 'tx=rollback' })
    expect(dryById.status).toBe(400)
    expect((await app.db.query('select name from public.projects where id = $1', [created.body.id])).rows[0].name).toBe('With ETag')
  })

  it('answers a body over the limit and a session route error in the one shape', async () => {
    const http = new KeyClient(app, key)
    const tooLarge = await http.post('/api/v1/notes', { title: 'big', body: 'x'.repeat(1024 * 1024 + 10) })
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body).toEqual({ error: expect.stringContaining('larger than'), code: 'payload_too_large', message: expect.stringContaining('larger than'), details: null, hint: null, request_id: tooLarge.headers.get('request-id') })
    const session = await owner.get('/api/teams/00000000-0000-0000-0000-000000000000/records/tasks')
    expect(session.status).toBe(404)
    expect(session.body).toEqual({ error: expect.any(String), code: expect.any(String) })
  })

  it('describes the protocol in the OpenAPI document: servers, the alias, new operations and CHECK ranges', async () => {
    const document = (await new KeyClient(app, key).get(`/rest/v1/`)).body
    expect(document.servers).toEqual([{ url: app.url, description: expect.stringContaining('/rest/v1') }])
    expect(document.info.description).toContain('/rest/v1')
    expect(document.components.securitySchemes.apikeyHeader).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'apikey' }))
    const tasks = document.paths['/api/v1/tasks']
    expect(Object.keys(tasks).sort()).toEqual(['delete', 'get', 'head', 'patch', 'post'])
    expect(tasks.get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['select', 'order', 'or', 'and', 'Prefer', 'Accept']))
    expect(tasks.post.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['Prefer', 'on_conflict', 'columns', 'select']))
    expect(document.components.schemas.tasks.properties.priority).toMatchObject({ minimum: 1, maximum: 5 })
    expect(document.components.schemas.tasks_create.properties.priority).toMatchObject({ minimum: 1, maximum: 5 })
    expect(document.components.schemas.Error.required).toEqual(['error', 'code', 'message', 'details', 'hint'])
  })

  it('answers HEAD with the headers of the list and no body', async () => {
    const answer = await fetch(`${app.url}/api/v1/projects?select=name`, { method: 'HEAD', headers: { authorization: `Bearer ${key}`, prefer: 'count=exact' } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-range')).toMatch(/^0-\d+\/\d+$/)
    expect(await answer.text()).toBe('')
  })

  it('refuses another schema, pages with a Range header, and negotiates the answer of one record', async () => {
    const otherSchema = await createClient(app.url, key, { db: { schema: 'private' }, auth: { persistSession: false }, realtime: { transport: NoWebSocket as never } })
      .from('tasks').select('title')
    expect(otherSchema.status).toBe(406)
    expect(otherSchema.error).toMatchObject({ code: 'PGRST106' })
    const http = new KeyClient(app, key)
    const all = await http.get<{ title: string }[]>('/api/v1/projects?select=name&order=name.asc')
    const ranged = await http.get<{ name: string }[]>('/api/v1/projects?select=name&order=name.asc', { 'range-unit': 'items', 'range': '1-2' })
    expect(ranged.body).toEqual(all.body.slice(1, 3))
    expect(ranged.headers.get('content-range')).toBe('1-2/*')
    const csv = await http.get(`/api/v1/projects/${launchId}`, { accept: 'text/csv' })
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/)
    expect(csv.body).toMatch(/^id,team_id,created_by,name,/)
    const xml = await http.get(`/api/v1/projects/${launchId}`, { accept: 'application/xml' })
    expect(xml.status).toBe(406)
  })

  it('covers the query string with an Idempotency-Key', async () => {
    const http = new KeyClient(app, key)
    const first = await http.patch(`/api/v1/projects?id=eq.${launchId}`, { description: 'once' }, { 'idempotency-key': 'filtered-1', 'prefer': 'return=representation' })
    expect(first.status).toBe(200)
    const replay = await http.patch(`/api/v1/projects?id=eq.${launchId}`, { description: 'once' }, { 'idempotency-key': 'filtered-1', 'prefer': 'return=representation' })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    const other = await http.patch(`/api/v1/projects?id=eq.${archiveId}`, { description: 'once' }, { 'idempotency-key': 'filtered-1', 'prefer': 'return=representation' })
    expect(other.status).toBe(422)
    expect((await app.db.query('select description from public.projects where id = $1', [archiveId])).rows[0].description).toBeNull()
  })
})
