import { afterEach, describe, expect, it } from 'vitest'
import { appWithTeamForFile } from '../support/file-hooks'
import type { TestApp } from '../support/app'
import { KeyClient, addMember, keyClientFor, signUp, type TeamFixture } from '../support/http'
import { EventSource } from 'eventsource'
import { openEventStream, type OpenStream } from '../support/event-stream'
import { waitFor } from '../support/wait'

// The change feed and its stream, as an integration reads them: a page of events after a cursor
// (GET /api/v1/events) and Server-Sent Events read by a WHATWG EventSource
// (GET /api/v1/events/stream), bound to the key's team and the tables its scopes let it read.
let app: TestApp
let team: TeamFixture
appWithTeamForFile({ CHANGES_HEARTBEAT_MS: '300' }, (started) => {
  ;({ app, team } = started)
})

const streams: OpenStream[] = []
afterEach(() => {
  for (const stream of streams.splice(0)) stream.close()
})

const taskTypes = ['tasks.created', 'tasks.updated', 'tasks.deleted']
const allTypes = [...taskTypes, 'projects.created', 'projects.updated', 'projects.deleted', 'notes.created']

function stream(key: KeyClient, query = '', headers: Record<string, string> = {}): OpenStream {
  const opened = openEventStream(`${app.url}/api/v1/events/stream${query}`, key.key, allTypes, headers)
  streams.push(opened)
  return opened
}

async function keyWith(scopes: Record<string, string>, name = 'Scoped'): Promise<KeyClient> {
  const answer = await team.owner.post(`/api/teams/${team.teamId}/api-keys`, { name, scopes })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return new KeyClient(app, answer.body.key)
}

/** Follows the feed from `after` through its Link headers until `count` events are read. */
async function readFeed(key: KeyClient, after: string, count: number, query = ''): Promise<any[]> {
  const events: any[] = []
  let path = `/api/v1/events?after=${after}&limit=7${query}`
  await waitFor(`${count} events in the feed`, async () => {
    const answer = await key.get(path)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    events.push(...answer.body)
    const next = /<([^>]+)>; rel="next"/.exec(answer.headers.get('link') ?? '')![1]!
    path = next.slice(new URL(next).origin.length)
    return events.length >= count
  })
  return events
}

/** The id of the newest event now: a cursor from which a test reads only its own events. */
async function latestId(key: KeyClient): Promise<string> {
  let after = '0'
  for (;;) {
    const answer = await key.get(`/api/v1/events?after=${after}&limit=100`)
    if (answer.body.length === 0) return after
    after = answer.body.at(-1).id
  }
}

describe('GET /api/v1/events', () => {
  it('lists a created, updated and deleted record oldest first, as the webhooks describe them, with who and from where', async () => {
    const key = await keyClientFor(app, team, 'Feed')
    const start = await latestId(key)
    const created = await key.post('/api/v1/tasks', { title: 'Feed task' })
    await key.patch(`/api/v1/tasks/${created.body.id}`, { priority: 1 })
    await key.delete(`/api/v1/tasks/${created.body.id}`)

    const events = await readFeed(key, start, 3)
    expect(events.map(e => e.type)).toEqual(['tasks.created', 'tasks.updated', 'tasks.deleted'])
    expect(events[0]).toMatchObject({ data: { id: created.body.id, title: 'Feed task', team_id: team.teamId }, actor_id: team.owner.user!.id, source: 'api' })
    expect(events[1].data).toMatchObject({ priority: 1, previous: { priority: 3 } })
    expect(events[2].data).toMatchObject({ id: created.body.id, priority: 1 })
    expect(Object.keys(events[0]).sort()).toEqual(['actor_id', 'created_at', 'data', 'id', 'source', 'type'])
    // ids are opaque strings that sort in the feed's order
    expect([...events.map(e => e.id)].sort()).toEqual(events.map(e => e.id))

    // a write made in the app shows the member and the web source
    const note = await team.member.post(`/api/teams/${team.teamId}/records/notes`, { title: 'From the web' })
    expect(note.status, JSON.stringify(note.body)).toBe(201)
    const [web] = await readFeed(key, events[2].id, 1)
    expect(web).toMatchObject({ type: 'notes.created', actor_id: team.member.user!.id, source: 'web' })
  })

  it('filters by types and pages with limit and Link; bad input is a 400 naming it', async () => {
    const key = await keyClientFor(app, team, 'Pager')
    const start = await latestId(key)
    const project = await key.post('/api/v1/projects', { name: 'Paged project' })
    for (let i = 0; i < 3; i++) await key.post('/api/v1/tasks', { title: `Paged ${i}`, project_id: project.body.id })

    // listed once no earlier transaction on the server can still commit (another test file's may be open)
    const first = await waitFor('the first page of two', async () => {
      const answer = await key.get(`/api/v1/events?after=${start}&types=tasks.created&limit=2`)
      return answer.body.length === 2 ? answer : undefined
    })
    expect(first.body.map((e: any) => e.data.title)).toEqual(['Paged 0', 'Paged 1'])
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1]!
    expect(next).toContain(`after=${first.body[1].id}`)
    expect(next).toContain('types=tasks.created')
    const second = await waitFor('the second page', async () => {
      const answer = await key.get(next.slice(new URL(next).origin.length))
      return answer.body.length ? answer : undefined
    })
    expect(second.body.map((e: any) => e.data.title)).toEqual(['Paged 2'])

    for (const query of ['limit=0', 'limit=101', 'limit=x', 'after=nope', 'types=tasks.exploded', 'types=nosuch.created']) {
      const answer = await key.get(`/api/v1/events?${query}`)
      expect(answer.status, query).toBe(400)
      expect(answer.body.message).toMatch(/limit|after|types/)
    }
    expect((await key.get('/api/v1/events')).body.length).toBeLessThanOrEqual(50)
    expect((await team.anonymous.get('/api/v1/events')).status).toBe(401)
  })

  it('shows a key only the tables its scopes let it read, and only its own team', async () => {
    const writer = await keyClientFor(app, team, 'Writer')
    const start = await latestId(writer)
    const projectsOnly = await keyWith({ projects: 'read' })
    const otherTeamOwner = team.outsider
    const otherTeamId = (await app.db.query('select team_id from public.team_members where user_id = $1', [otherTeamOwner.user!.id])).rows[0].team_id
    const otherKey = await keyClientFor(app, { teamId: otherTeamId, owner: otherTeamOwner }, 'Elsewhere')
    const otherStart = await latestId(otherKey)

    await writer.post('/api/v1/tasks', { title: 'Hidden from the projects key' })
    await writer.post('/api/v1/projects', { name: 'Seen by the projects key' })
    await readFeed(writer, start, 2)
    const seen = await readFeed(projectsOnly, start, 1)
    expect(seen.map(e => e.type)).toEqual(['projects.created'])
    expect((await projectsOnly.get(`/api/v1/events?after=${seen[0].id}`)).body).toEqual([])
    expect((await otherKey.get(`/api/v1/events?after=${otherStart}`)).body).toEqual([])
  })

  it('is not a table: the events path is never taken for a table name', async () => {
    const key = await keyClientFor(app, team, 'Not a table')
    expect((await key.post('/api/v1/events', { title: 'x' })).status).toBe(405)
    const openapi = (await team.anonymous.get('/api/v1/openapi.json')).body
    expect(openapi.paths['/api/v1/events'].get.operationId).toBe('list_events')
    expect(openapi.paths['/api/v1/events/stream'].get.operationId).toBe('stream_events')
  })
})

describe('GET /api/v1/events/stream', () => {
  it('sends each event with its id and type, and a heartbeat comment while idle', async () => {
    const key = await keyClientFor(app, team, 'Streamer')
    const live = stream(key)
    await waitFor('the stream to open', () => live.raw().includes(': connected'))
    const created = await key.post('/api/v1/tasks', { title: 'Streamed' })
    await waitFor('the created event', () => live.messages.length >= 1)
    expect(live.messages[0]).toMatchObject({ type: 'tasks.created', data: { type: 'tasks.created', data: { id: created.body.id } } })
    expect(live.messages[0]!.id).toBe(live.messages[0]!.data.id)
    await waitFor('two heartbeat comments', () => live.raw().split(': heartbeat').length > 2)
  })

  it('resumes from Last-Event-ID or after, replaying what was missed, then goes on live', async () => {
    const key = await keyClientFor(app, team, 'Resumer')
    const start = await latestId(key)
    await key.post('/api/v1/tasks', { title: 'Missed 1' })
    await key.post('/api/v1/tasks', { title: 'Missed 2' })
    const [missed1] = await readFeed(key, start, 1)

    const byHeader = stream(key, '', { 'last-event-id': missed1.id })
    const byQuery = stream(key, `?after=${start}`)
    await waitFor('the replay', () => byHeader.messages.length >= 1 && byQuery.messages.length >= 2)
    await key.post('/api/v1/tasks', { title: 'Live 3' })
    await waitFor('the live event', () => byHeader.messages.length >= 2 && byQuery.messages.length >= 3)
    expect(byHeader.messages.map(m => m.data.data.title)).toEqual(['Missed 2', 'Live 3'])
    expect(byQuery.messages.map(m => m.data.data.title)).toEqual(['Missed 1', 'Missed 2', 'Live 3'])
    expect((await key.get('/api/v1/events/stream?after=nope')).status).toBe(400)
  })

  it('reconnects as EventSource does after the server ends a stream, missing nothing', async () => {
    const key = await keyClientFor(app, team, 'Reconnector')
    const live = stream(key)
    await waitFor('the stream to open', () => live.raw().includes(': connected'))
    await key.post('/api/v1/tasks', { title: 'Before the cut' })
    await waitFor('the first event', () => live.messages.length >= 1)
    // the app restarts: the stream ends, EventSource reconnects with Last-Event-ID
    await app.restart()
    await key.post('/api/v1/tasks', { title: 'While away' })
    await waitFor('the event written while away', () => live.messages.length >= 2, { timeoutMs: 30_000 })
    expect(live.messages.map(m => m.data.data.title)).toEqual(['Before the cut', 'While away'])
    expect(live.errors).toBeGreaterThan(0)
  })

  it('sends a key only its scopes\' tables and its team', async () => {
    const writer = await keyClientFor(app, team, 'Scoped writer')
    const projectsOnly = await keyWith({ projects: 'read' })
    const live = stream(projectsOnly)
    await waitFor('the stream to open', () => live.raw().includes(': connected'))
    await writer.post('/api/v1/tasks', { title: 'Not for the projects key' })
    await writer.post('/api/v1/projects', { name: 'For the projects key' })
    await waitFor('the project event', () => live.messages.length >= 1)
    expect(live.messages.map(m => m.type)).toEqual(['projects.created'])
  })

  it('allows 10 open streams per key: the 11th is a 429; one closed frees a place', async () => {
    const key = await keyClientFor(app, team, 'Ten')
    const open = Array.from({ length: 10 }, () => stream(key))
    await waitFor('ten streams open', () => open.every(s => s.raw().includes(': connected')))
    const refused = await key.get('/api/v1/events/stream')
    expect(refused.status).toBe(429)
    expect(refused.body.message).toMatch(/10 event streams/)
    open[0]!.close()
    await waitFor('a place to free', async () => {
      const controller = new AbortController()
      const answer = await fetch(`${app.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key.key}` }, signal: controller.signal })
      controller.abort()
      return answer.status === 200
    })
  })

  it('ends the stream when its key is revoked, and the key cannot open another', async () => {
    const key = await keyClientFor(app, team, 'Revoked soon')
    const live = stream(key)
    await waitFor('the stream to open', () => live.raw().includes(': connected'))
    const keyId = (await app.db.query('select id from public.api_keys where team_id = $1 and name = $2', [team.teamId, 'Revoked soon'])).rows[0].id
    const revoked = await team.owner.patch(`/api/teams/${team.teamId}/api-keys/${keyId}`)
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200)
    await waitFor('the stream to end', () => live.raw().includes('revoked'))
    expect((await key.get('/api/v1/events/stream')).status).toBe(401)
  })
})

describe('GET /api/teams/{teamId}/events/stream (the live pages)', () => {
  it('sends a member the team\'s changes as plain messages; another team\'s user gets a 404, nobody signed in a 401', async () => {
    const source = new EventSource(`${app.url}/api/teams/${team.teamId}/events/stream`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, cookie: team.member.cookie } }),
    })
    const received: any[] = []
    source.onmessage = message => received.push(JSON.parse(message.data))
    await new Promise(resolve => (source.onopen = resolve))
    const key = await keyClientFor(app, team, 'Live pages')
    await key.post('/api/v1/projects', { name: 'Seen by the page' })
    await waitFor('the page\'s event', () => received.length >= 1)
    expect(received[0]).toMatchObject({ type: 'projects.created', data: { name: 'Seen by the page' }, source: 'api' })
    source.close()

    expect((await team.outsider.get(`/api/teams/${team.teamId}/events/stream`)).status).toBe(404)
    expect((await team.anonymous.get(`/api/teams/${team.teamId}/events/stream`)).status).toBe(401)
  })

  it('ends a member\'s stream when they leave the team', async () => {
    const leaver = await signUp(app, { name: 'Lee Leaver' })
    await addMember(app, team.teamId, leaver, 'member')
    const source = new EventSource(`${app.url}/api/teams/${team.teamId}/events/stream`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, cookie: leaver.cookie } }),
    })
    await new Promise(resolve => (source.onopen = resolve))
    await app.db.query('delete from public.team_members where team_id = $1 and user_id = $2', [team.teamId, leaver.user!.id])
    // the stream ends; EventSource tries again, is refused (404) and gives up
    await waitFor('the stream to close for good', () => source.readyState === EventSource.CLOSED)
    source.close()
  })
})
