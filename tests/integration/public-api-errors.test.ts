import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { webhookAppForFile } from '../support/file-hooks'
import { KeyClient, type TeamFixture } from '../support/http'

// What an integration sees when it gets something wrong: one content type for bodies, one code
// per problem wherever it is found, rules said in words, and the error body on every status.
let app: TestApp
let fixture: TeamFixture
let api: KeyClient

const startReceiver = webhookAppForFile({}, async (started) => {
  ({ app, team: fixture } = started)
  const key = await fixture.owner.post(`/api/teams/${fixture.teamId}/api-keys`, { name: 'Errors', scopes: { '*': 'write', 'webhooks': 'write' } })
  api = new KeyClient(app, key.body.key)
})

const teamTasks = async () => (await app.db.query('select count(*)::int as n from public.tasks where team_id = $1', [fixture.teamId])).rows[0].n as number

/** A request with a body of our own making (the test client always sends JSON). */
async function send(method: string, path: string, body: string, headers: Record<string, string>) {
  const response = await fetch(`${app.url}${path}`, { method, body, headers: { authorization: `Bearer ${api.key}`, ...headers } })
  const text = await response.text()
  return { status: response.status, statusText: response.statusText, headers: response.headers, body: text ? JSON.parse(text) : null }
}

const errorBody = { error: expect.any(String), code: expect.any(String), message: expect.any(String), details: null, hint: expect.toSatisfy((hint: unknown) => hint === null || typeof hint === 'string') }

describe('bodies are JSON', () => {
  it.each([
    ['/api/v1/tasks', 'POST'],
    ['/rest/v1/tasks', 'POST'],
    ['/api/v1/tasks?title=eq.x', 'PATCH'],
    ['/api/v1/webhook-endpoints', 'POST'],
  ])('%s %s: a form body is 415 naming application/json, and nothing is written', async (path, method) => {
    await api.post('/api/v1/tasks', { title: 'x' })
    const before = await teamTasks()
    const answer = await send(method, path, 'title=x', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(answer.status).toBe(415)
    expect(answer.body).toMatchObject({ ...errorBody, code: 'PGRST107', message: expect.stringContaining('application/json') })
    expect(answer.body.message).toContain('application/x-www-form-urlencoded')
    expect(await teamTasks()).toBe(before)
  })

  it('refuses JSON sent as text/plain with 415, and reads a body without a Content-Type as JSON', async () => {
    const plain = await send('POST', '/api/v1/tasks', JSON.stringify({ title: 'Plain' }), { 'content-type': 'text/plain' })
    expect(plain.status).toBe(415)
    expect(plain.body.message).toMatch(/text\/plain.*application\/json/)
    const untyped = await fetch(`${app.url}/api/v1/tasks`, { method: 'POST', body: new Uint8Array(Buffer.from(JSON.stringify({ title: 'Untyped' }))), headers: { authorization: `Bearer ${api.key}` } })
    expect(untyped.headers.get('content-type')).toMatch(/json/)
    expect(untyped.status).toBe(201)
    expect((await untyped.json()).title).toBe('Untyped')
    const charset = await send('POST', '/api/v1/tasks', JSON.stringify({ title: 'Charset' }), { 'content-type': 'application/json; charset=utf-8' })
    expect(charset.status).toBe(201)
  })
})

describe('one code per problem, and the rule in words', () => {
  it('gives an unknown column 42703 in a body, a filter, order, select and columns', async () => {
    const answers = [
      await api.post('/api/v1/tasks', { title: 'x', colour: 'red' }),
      await api.get('/api/v1/tasks?colour=eq.red'),
      await api.get('/api/v1/tasks?order=colour.asc'),
      await api.get('/api/v1/tasks?select=colour'),
      await api.post('/api/v1/tasks?columns=title,colour', [{ title: 'x' }]),
    ]
    for (const answer of answers) {
      expect(answer.status).toBe(400)
      expect(answer.body).toMatchObject({ code: '42703', message: expect.stringMatching(/colour.*is not a column of tasks/) })
    }
  })

  it('gives a wrong type 22P02 in a body and in a filter, naming the field and its type in words', async () => {
    const body = await api.post('/api/v1/tasks', { title: 'x', priority: 'high' })
    const filter = await api.get('/api/v1/tasks?priority=eq.high')
    for (const answer of [body, filter]) {
      expect(answer.status).toBe(400)
      expect(answer.body).toMatchObject({ code: '22P02', message: expect.stringMatching(/^priority: must be an integer/) })
    }
    const status = await api.post('/api/v1/tasks', { title: 'x', status: 'blocked' })
    const statusFilter = await api.get('/api/v1/tasks?status=eq.blocked')
    for (const answer of [status, statusFilter]) expect(answer.body).toMatchObject({ code: '22P02', message: expect.stringMatching(/^status: must be one of: todo, in_progress, done/) })
  })

  it.each([
    [{ title: 'x', priority: 9 }, 'priority: must be an integer between 1 and 5', '23514'],
    [{ title: 'x', priority: 1e20 }, 'priority: must be an integer between 1 and 5', '23514'],
    [{ title: '' }, 'title: must be a string 1 to 200 characters long', '23514'],
    [{ title: 'x'.repeat(201) }, 'title: must be a string 1 to 200 characters long', '23514'],
    [{}, 'title: is required', '23502'],
    [{ title: null }, 'title: is required', '23502'],
  ])('says %j breaks "%s" (%s), with no SQL and no number the column never takes', async (body, message, code) => {
    const before = await teamTasks()
    const answer = await api.post('/api/v1/tasks', body)
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({ code, message })
    expect(answer.body.message).not.toMatch(/CHECK|9007199254740991|>=|<=/)
    expect(await teamTasks()).toBe(before)
  })

  it('says the same for a PATCH and a PostgREST bulk insert, the element named', async () => {
    const task = (await api.post('/api/v1/tasks', { title: 'Patched' })).body
    const patch = await api.patch(`/api/v1/tasks/${task.id}`, { priority: 0 })
    expect(patch.body).toMatchObject({ code: '23514', message: 'priority: must be an integer between 1 and 5' })
    const bulk = await api.post('/rest/v1/tasks', [{ title: 'ok' }, { title: 'x', priority: 7 }])
    expect(bulk.body).toMatchObject({ code: '23514', message: '[1].priority: must be an integer between 1 and 5' })
  })
})

describe('every status has the error body', () => {
  it('answers a URL too long for the server (in.(…) of 20,000 values) 414 with the error body', async () => {
    const values = Array.from({ length: 20_000 }, (_, i) => i % 5 + 1).join(',')
    const answer = await api.get(`/api/v1/tasks?priority=in.(${values})`)
    expect(answer.status).toBe(414)
    expect(answer.body).toMatchObject({ ...errorBody, code: 'uri_too_long', message: expect.stringMatching(/URL is longer/) })
  })

  it('answers headers too large 431 with the error body', async () => {
    const answer = await new Promise<{ status: number, body: string }>((resolve, reject) => {
      const request = httpRequest(`${app.url}/api/v1/tasks`, { headers: { 'x-padding': 'p'.repeat(20_000) } }, (response) => {
        let body = ''
        response.on('data', (chunk: Buffer) => body += chunk)
        response.on('end', () => resolve({ status: response.statusCode!, body }))
      })
      request.on('error', reject)
      request.end()
    })
    expect(answer.status).toBe(431)
    expect(JSON.parse(answer.body)).toMatchObject({ ...errorBody, code: 'headers_too_large' })
  })

  it('answers a Range that ends before it starts 416', async () => {
    const answer = await api.get('/api/v1/tasks', { range: '5-2' })
    expect(answer.status).toBe(416)
    expect(answer.body).toMatchObject({ ...errorBody, code: 'PGRST103' })
    expect((await api.get('/api/v1/tasks', { range: '0-1' })).status).toBe(200)
  })

  it('never reports a planned total below the rows served', async () => {
    // statistics taken before the rows exist: the planner then expects (almost) none of them
    await app.db.query('analyze public.tasks')
    await app.db.query(`insert into public.tasks (team_id, created_by, title) select $1, $2, 'planned ' || i from generate_series(1, 4) i`, [fixture.teamId, fixture.owner.user!.id])
    for (const method of ['GET', 'HEAD']) {
      const answer = await api.request(method, '/api/v1/tasks?title=like.planned*&limit=4', undefined, { prefer: 'count=planned' })
      expect(answer.status).toBe(200)
      const [, last, total] = /^0-(\d+)\/(\d+)$/.exec(answer.headers.get('content-range') ?? '')!
      expect(Number(last)).toBe(3)
      expect(Number(total)).toBeGreaterThanOrEqual(4)
    }
  })

  it('lists each method once in a 405\'s Allow, with a short status text and the message in the body', async () => {
    const answer = await send('PUT', '/api/v1/tasks', '{}', { 'content-type': 'application/json' })
    expect(answer.status).toBe(405)
    expect(answer.statusText).toBe('Method Not Allowed')
    const allow = answer.headers.get('allow')!.split(', ')
    expect(allow).toEqual([...new Set(allow)])
    expect(allow).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE']))
    expect(answer.body).toMatchObject({ ...errorBody, code: 'method_not_allowed', message: expect.stringMatching(/^Method PUT is not allowed here/) })
  })
})

describe('webhook payloads', () => {
  it('carry timestamps in the form the API answers them, ending in Z', async () => {
    const receiver = await startReceiver('')
    const created = await api.post('/api/v1/webhook-endpoints', { url: receiver.url, events: ['tasks.created', 'tasks.updated'] })
    expect(created.status).toBe(201)
    receiver.secret = created.body.secret
    const task = (await api.post('/api/v1/tasks', { title: 'Stamped', due_date: '2026-12-01' })).body
    await api.patch(`/api/v1/tasks/${task.id}`, { status: 'done', completed_at: '2026-11-26T10:00:00.5+02:00' })
    const [createdEvent, updatedEvent] = await receiver.waitFor(2)
    const answered = (await api.get(`/api/v1/tasks/${task.id}`)).body
    expect(createdEvent!.payload!.data.created_at).toBe(task.created_at)
    expect(updatedEvent!.payload!.data).toMatchObject({ completed_at: '2026-11-26T08:00:00.500Z', updated_at: answered.updated_at, due_date: '2026-12-01' })
    expect(updatedEvent!.payload!.data.previous).toMatchObject({ completed_at: null })
    for (const event of [createdEvent!, updatedEvent!]) {
      expect(event.payload!.timestamp).toMatch(/Z$/)
      expect(JSON.stringify(event.payload!.data)).not.toContain('+00:00')
    }
  })
})
