import { request as httpRequest } from 'node:http'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { appWithModelForFile } from '../support/file-hooks'
import { Client, keyClientFor, signUp, uniqueEmail, type KeyClient, type TeamFixture } from '../support/http'

let app: TestApp
let team: TeamFixture
let api: KeyClient
let projectId: string
let taskId: string
let chatId: string

appWithModelForFile(() => ({}), async (started) => {
  ({ app, team } = started)
  api = await keyClientFor(app, team, 'Hostile input')
  projectId = (await api.post('/api/v1/projects', { name: 'Target' })).body.id
  taskId = (await api.post('/api/v1/tasks', { title: 'Target task' })).body.id
  chatId = (await team.member.post('/api/chats', { title: 'Target chat' })).body.id
})

interface WriteRoute {
  name: string
  client: () => Client
  method: 'POST' | 'PATCH' | 'PUT'
  path: () => string
  /** A valid body; every string in it is attacked in turn. */
  body: () => Record<string, unknown>
}

const routes: WriteRoute[] = [
  { name: 'sign-up', client: () => new Client(app), method: 'POST', path: () => '/api/auth/signup', body: () => ({ email: uniqueEmail('nul'), password: 'password-123', name: 'Nul Name' }) },
  { name: 'sign-in', client: () => new Client(app), method: 'POST', path: () => '/api/auth/login', body: () => ({ email: uniqueEmail('nul'), password: 'password-123' }) },
  { name: 'current team', client: () => team.member, method: 'PUT', path: () => '/api/auth/current-team', body: () => ({ team_id: team.teamId }) },
  { name: 'team creation', client: () => team.member, method: 'POST', path: () => '/api/teams', body: () => ({ name: 'New team' }) },
  { name: 'team update', client: () => team.owner, method: 'PATCH', path: () => `/api/teams/${team.teamId}`, body: () => ({ name: 'Renamed', webhook_url: 'https://example.com/hook' }) },
  { name: 'API key creation', client: () => team.owner, method: 'POST', path: () => `/api/teams/${team.teamId}/api-keys`, body: () => ({ name: 'Key', expires_at: '2099-01-01T00:00:00Z' }) },
  { name: 'member role', client: () => team.owner, method: 'PATCH', path: () => `/api/teams/${team.teamId}/members/${team.member.user!.id}`, body: () => ({ role: 'member' }) },
  { name: 'invitation', client: () => team.owner, method: 'POST', path: () => `/api/teams/${team.teamId}/invitations`, body: () => ({ email: uniqueEmail('invitee'), role: 'member' }) },
  { name: 'chat creation', client: () => team.member, method: 'POST', path: () => '/api/chats', body: () => ({ title: 'A chat' }) },
  { name: 'chat rename', client: () => team.member, method: 'PATCH', path: () => `/api/chats/${chatId}`, body: () => ({ title: 'Renamed chat' }) },
  { name: 'chat turn', client: () => team.member, method: 'POST', path: () => `/api/chats/${chatId}`, body: () => ({ message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'Hello' }] } }) },
  { name: 'v1 project creation', client: () => api, method: 'POST', path: () => '/api/v1/projects', body: () => ({ name: 'Project', description: 'About it', status: 'active' }) },
  { name: 'v1 task creation', client: () => api, method: 'POST', path: () => '/api/v1/tasks', body: () => ({ title: 'Task', status: 'done', project_id: projectId, due_date: '2030-01-31', completed_at: '2030-01-01T10:00:00Z' }) },
  { name: 'v1 task update', client: () => api, method: 'PATCH', path: () => `/api/v1/tasks/${taskId}`, body: () => ({ title: 'Task', due_date: '2030-01-31' }) },
  { name: 'v1 note creation', client: () => api, method: 'POST', path: () => '/api/v1/notes', body: () => ({ title: 'Note', body: 'Text', project_id: projectId }) },
]

const writtenTables = ['profiles', 'teams', 'team_members', 'api_keys', 'invitations', 'chats', 'chat_messages', 'projects', 'tasks', 'notes', 'activity_log']

/** Every row of the tables a write route could change, as text, to compare before and after. */
async function snapshot(): Promise<Record<string, string[]>> {
  const result: Record<string, string[]> = {}
  for (const table of writtenTables) {
    const { rows } = await app.db.query(`select t::text as row from public.${table} t order by 1`)
    result[table] = rows.map(r => r.row)
  }
  return result
}

/** The paths of every string inside a body, e.g. ['message', 'parts', '0', 'text']. */
function stringPaths(value: unknown, path: string[] = []): string[][] {
  if (typeof value === 'string') return [path]
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, child]) => stringPaths(child, [...path, key]))
}

/** A deep copy of `body` with the value at `path` replaced. */
function withValue(body: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(body)
  let node: Record<string, unknown> = copy
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>
  node[path.at(-1)!] = value
  return copy
}

describe('malformed bodies on every write route', () => {
  it('refuses a NUL character in every text field with 400 naming the field, and writes nothing', async () => {
    const before = await snapshot()
    const answers: string[] = []
    for (const route of routes) {
      const body = route.body()
      for (const path of stringPaths(body)) {
        const original = path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], body) as string
        const answer = await route.client().request(route.method, route.path(), withValue(body, path, `${original.slice(0, 2)}\u0000${original.slice(2)}`))
        answers.push(`${route.name} ${path.join('.')}: ${answer.status} ${answer.body?.error}`)
        expect(answer.status, `${route.name} ${path.join('.')}`).toBe(400)
        expect(answer.body.error, `${route.name} ${path.join('.')}`).toBe(`${path.join('.')}: must not contain the NUL character (\\u0000)`)
      }
      // in a key too
      const answer = await route.client().request(route.method, route.path(), { ...body, 'a\u0000b': 'x' })
      expect(answer.status, `${route.name} key`).toBe(400)
    }
    expect(answers.length).toBeGreaterThan(30)
    expect(await snapshot()).toEqual(before)
  })

  it('refuses wrong types in every field with a 4xx, never a 500, and writes nothing', async () => {
    const before = await snapshot()
    const wrongValues: unknown[] = [12345, -1.5, true, [], ['x'], {}, { nested: 'x' }]
    for (const route of routes) {
      const body = route.body()
      for (const path of stringPaths(body)) {
        for (const value of wrongValues) {
          const answer = await route.client().request(route.method, route.path(), withValue(body, path, value))
          const label = `${route.name} ${path.join('.')} = ${JSON.stringify(value).slice(0, 20)}`
          expect(answer.status, label).toBeGreaterThanOrEqual(400)
          expect(answer.status, label).toBeLessThan(500)
          expect(typeof answer.body?.error, label).toBe('string')
        }
      }
      for (const raw of ['not json', '[1,2]', '"text"', '{"a":', '']) {
        const answer = await route.client().request(route.method, route.path(), raw)
        expect(answer.status, `${route.name} body ${raw}`).toBeGreaterThanOrEqual(400)
        expect(answer.status, `${route.name} body ${raw}`).toBeLessThan(500)
      }
    }
    expect(await snapshot()).toEqual(before)
  })

  it('takes a date and time with any offset (+23:59) as the same instant, and answers 400 for dates Postgres cannot store', async () => {
    const key = await team.owner.post(`/api/teams/${team.teamId}/api-keys`, { name: 'Offset key', expires_at: '2099-01-01T00:00:00+23:59' })
    expect(key.status).toBe(201)
    expect(new Date(key.body.expires_at).toISOString()).toBe('2098-12-31T00:01:00.000Z')
    const task = await api.post('/api/v1/tasks', { title: 'Offset task', status: 'done', completed_at: '2030-06-01T12:00:00-23:59' })
    expect(task.status).toBe(201)
    expect(new Date(task.body.completed_at).toISOString()).toBe('2030-06-02T11:59:00.000Z')

    const before = await snapshot()
    const odd = [
      ['expires_at', '2099-01-01T00:00:00+99:99'], ['expires_at', '2099-02-30T00:00:00Z'], ['expires_at', '9999-12-31T23:59:59-23:59'],
      ['expires_at', '2099-01-01'], ['expires_at', 'tomorrow'], ['expires_at', '2000-01-01T00:00:00Z'],
    ] as const
    for (const [field, value] of odd) {
      const answer = await team.owner.post(`/api/teams/${team.teamId}/api-keys`, { name: 'Odd key', [field]: value })
      expect(answer.status, value).toBe(400)
      expect(answer.body.error, value).toMatch(/^expires_at: /)
    }
    for (const [field, value] of [['due_date', '0000-01-01'], ['due_date', '2030-02-30'], ['completed_at', '0001-01-01T00:00:00+01:00'], ['completed_at', '2030-13-01T00:00:00Z']] as const) {
      const answer = await api.post('/api/v1/tasks', { title: 'Odd task', status: 'done', completed_at: '2030-01-01T00:00:00Z', [field]: value })
      expect(answer.status, value).toBe(400)
      expect(answer.body.error, value).toMatch(new RegExp(`^${field}: `))
    }
    expect(await snapshot()).toEqual(before)
  })

  it('refuses a NUL character in a query string with 400', async () => {
    const answer = await api.get('/api/v1/tasks?title=eq.a%00b')
    expect(answer.status).toBeGreaterThanOrEqual(400)
    expect(answer.status).toBeLessThan(500)
    const activity = await team.owner.get(`/api/teams/${team.teamId}/activity?table=ta%00sks`)
    expect(activity.status).toBe(400)
  })
})

describe('bodies nested too deep, and text Postgres cannot store', () => {
  it('refuses a body nested 20,000 levels deep with 400 on every write route, and writes nothing', async () => {
    const before = await snapshot()
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`
    for (const route of routes) {
      const body = route.body()
      const field = Object.keys(body)[0]!
      for (const raw of [
        JSON.stringify({ ...body, extra: 0 }).replace('"extra":0', `"extra":${deep}`),
        JSON.stringify({ ...body, [field]: 0 }).replace(`"${field}":0`, `"${field}":${deep}`),
      ]) {
        const answer = await route.client().request(route.method, route.path(), raw)
        expect(answer.status, route.name).toBe(400)
        expect(answer.body.error, route.name).toBe('The input nests arrays and objects more than 64 levels deep')
      }
    }
    expect(await snapshot()).toEqual(before)
  })

  it('leaves a body within the depth limit to the route\'s own checks', async () => {
    // the body is level 1: 63 arrays inside it reach level 64, the limit
    const within = JSON.parse(`${'['.repeat(63)}"deep"${']'.repeat(63)}`)
    const answer = await api.post('/api/v1/notes', { title: 'Deep', body: within })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(/^body: /)
    const over = JSON.parse(`${'['.repeat(64)}"deep"${']'.repeat(64)}`)
    expect((await api.post('/api/v1/notes', { title: 'Deep', body: over })).body.error).toBe('The input nests arrays and objects more than 64 levels deep')
  })

  it('refuses a lone UTF-16 surrogate in every text field with 400 naming the field, and writes nothing', async () => {
    const before = await snapshot()
    let checked = 0
    for (const route of routes) {
      const body = route.body()
      for (const path of stringPaths(body)) {
        const original = path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], body) as string
        for (const surrogate of ['\ud800', '\udfff']) {
          const answer = await route.client().request(route.method, route.path(), withValue(body, path, `${original}${surrogate}`))
          expect(answer.status, `${route.name} ${path.join('.')}`).toBe(400)
          expect(answer.body.error, `${route.name} ${path.join('.')}`).toBe(`${path.join('.')}: must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)`)
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(60)
    expect(await snapshot()).toEqual(before)
    // a pair (an emoji) is text like any other
    const renamed = await team.member.patch(`/api/chats/${chatId}`, { title: 'Launch \ud83d\ude80' })
    expect(renamed.status).toBe(200)
    expect(renamed.body.title).toBe('Launch \ud83d\ude80')
  })
})

/** Sends a JSON body in chunks, without Content-Length (Transfer-Encoding: chunked). */
function sendChunked(path: string, headers: Record<string, string>, chunks: string[]): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    let answer: { status: number, body: string } | undefined
    const request = httpRequest(new URL(path, app.url), { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      answer = { status: response.statusCode!, body: '' }
      response.on('data', (chunk) => {
        answer!.body += chunk
      })
      response.on('end', () => resolve(answer!))
    })
    // the server may close the connection after refusing while the rest of the body is still being sent
    request.on('error', error => answer ? resolve(answer) : reject(error))
    expect(request.getHeader('content-length')).toBeUndefined()
    for (const chunk of chunks) request.write(chunk)
    request.end()
  })
}

describe('body limit', () => {
  it('refuses a 2 MB chunked body without Content-Length with 413 and stores nothing', async () => {
    const before = await snapshot()
    const text = 'x'.repeat(64 * 1024)
    const chunks = ['{"title":"Big note","body":"', ...Array.from({ length: 32 }, () => text), '"}']
    const answer = await sendChunked('/api/v1/notes', { authorization: `Bearer ${api.key}` }, chunks)
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body).error).toMatch(/larger than 1048576 bytes/)
    const session = await sendChunked('/api/teams', { cookie: team.member.cookie }, ['{"name":"', ...Array.from({ length: 32 }, () => text), '"}'])
    expect(session.status).toBe(413)
    expect(await snapshot()).toEqual(before)
  })

  it('takes a small chunked body as usual', async () => {
    const answer = await sendChunked('/api/v1/notes', { authorization: `Bearer ${api.key}` }, ['{"title":"Chunked', ' note","body":"', 'in parts"}'])
    expect(answer.status).toBe(201)
    expect(JSON.parse(answer.body)).toMatchObject({ title: 'Chunked note', body: 'in parts' })
  })

  it('refuses a declared Content-Length over the limit', async () => {
    const answer = await api.post('/api/v1/notes', { title: 'Big', body: 'y'.repeat(1024 * 1024) })
    expect(answer.status).toBe(413)
  })
})

describe('sign-up with hostile names', () => {
  it('stores names with any other Unicode as given', async () => {
    const client = await signUp(app, { name: 'Zoë 🚀 \u202e' })
    expect(client.user!.name).toBe('Zoë 🚀 \u202e')
  })
})
