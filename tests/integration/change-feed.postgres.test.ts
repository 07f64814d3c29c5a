import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, createTeam, signUp } from '../support/http'
import { openEventStream, type OpenStream } from '../support/event-stream'
import { waitFor } from '../support/wait'

// The feed never skips an event, whatever order concurrent transactions commit in, and a write on
// one app process reaches a stream held by another (each process follows the feed with one
// listener and fans out from memory).
let first: TestApp
let second: TestApp
let owner: Awaited<ReturnType<typeof signUp>>
let teamId: string
let key: string
beforeAll(async () => {
  first = await startApp()
  second = await startApp({}, { databaseUrl: first.databaseUrl })
  owner = await signUp(first, { name: 'Feed Owner' })
  teamId = await createTeam(owner, 'Feed Team')
  key = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Follower' })).body.key
})
afterAll(async () => {
  await second?.stop()
  await first?.stop()
})
const streams: OpenStream[] = []
afterEach(() => {
  for (const stream of streams.splice(0)) stream.close()
})

const types = ['tasks.created', 'tasks.updated', 'tasks.deleted']

async function newestId(client: KeyClient): Promise<string> {
  let after = '0'
  for (;;) {
    const answer = await client.get(`/api/v1/events?after=${after}&limit=100`)
    if (answer.body.length === 0) return after
    after = answer.body.at(-1).id
  }
}

describe('the cursor', () => {
  it('never skips an event of a transaction that commits after later ones (held open during a burst of writers)', async () => {
    const client = new KeyClient(first, key)
    const start = await newestId(client)
    const live = openEventStream(`${second.url}/api/v1/events/stream?after=${start}`, key, types)
    streams.push(live)

    // a transaction writes a task and stays open: it has the smaller transaction id
    const held = new pg.Client({ connectionString: first.databaseUrl })
    await held.connect()
    await held.query('begin')
    await held.query(
      `insert into public.tasks (team_id, created_by, title) values ($1, $2, 'Held open')`,
      [teamId, owner.user!.id],
    )

    // meanwhile 20 writers commit, through both processes at once
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      new KeyClient(i % 2 ? second : first, key).post('/api/v1/tasks', { title: `Burst ${i}` })))
    expect(burst.every(answer => answer.status === 201)).toBe(true)

    // a follower reading the feed now, as a script would, moves its cursor only over what is settled
    const seen: any[] = []
    let cursor = start
    const readOnce = async () => {
      const answer = await client.get(`/api/v1/events?after=${cursor}&limit=100`)
      seen.push(...answer.body)
      if (answer.body.length) cursor = answer.body.at(-1).id
    }
    await readOnce()
    // nothing after the held transaction is listed while it may still commit before it
    expect(seen.map(e => e.data.title)).not.toContain('Burst 0')
    expect(live.messages).toEqual([])

    await held.query('commit')
    await held.end()
    await waitFor('all 21 events through the cursor', async () => {
      await readOnce()
      return seen.length >= 21
    })
    const titles = seen.map(e => e.data.title)
    expect(titles[0]).toBe('Held open')
    expect(new Set(titles).size).toBe(21)
    expect(titles.filter(t => t.startsWith('Burst')).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `Burst ${i}`).sort())
    expect([...seen.map(e => e.id)].sort()).toEqual(seen.map(e => e.id))

    // the stream (on the other process) delivers the same events in the same order
    await waitFor('the stream to deliver all 21', () => live.messages.length >= 21)
    expect(live.messages.map(m => m.id)).toEqual(seen.map(e => e.id))
  })

  it('a write on one process reaches a stream held on the other, live', async () => {
    const live = openEventStream(`${second.url}/api/v1/events/stream`, key, types)
    streams.push(live)
    await waitFor('the stream to open', () => live.raw().includes(': connected'))
    const created = await new KeyClient(first, key).post('/api/v1/tasks', { title: 'Across processes' })
    await waitFor('the event on the other process', () => live.messages.length >= 1)
    expect(live.messages[0]).toMatchObject({ type: 'tasks.created', data: { data: { id: created.body.id, title: 'Across processes' } } })
  })

  it('counts a key\'s open streams across processes: 10 in all, the 11th is a 429 on either', async () => {
    const tenKey = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Ten across' })).body.key
    const open = Array.from({ length: 10 }, (_, i) => openEventStream(`${(i % 2 ? second : first).url}/api/v1/events/stream`, tenKey, types))
    streams.push(...open)
    await waitFor('ten streams open', () => open.every(s => s.raw().includes(': connected')))
    for (const app of [first, second]) {
      const refused = await new KeyClient(app, tenKey).get('/api/v1/events/stream')
      expect(refused.status).toBe(429)
    }
  })
})

/** A connection to the database listening to `channels`, and the channels of the notifications it heard, in order. */
async function listenTo(...channels: string[]): Promise<{ listener: pg.Client, heard: string[] }> {
  const listener = new pg.Client({ connectionString: first.databaseUrl })
  await listener.connect()
  const heard: string[] = []
  listener.on('notification', message => heard.push(message.channel))
  for (const channel of channels) await listener.query(`listen ${channel}`)
  return { listener, heard }
}

describe('announcing new events', () => {
  // A notification inside a transaction makes concurrent commits wait for each other's flush: the
  // app's writes say so in their audit context and are announced once committed instead.
  it('sends no notification inside a write that the app announces itself, and one inside any other write', async () => {
    const { listener, heard } = await listenTo('record_events', 'tws_test_marker')
    const writer = new pg.Client({ connectionString: first.databaseUrl })
    await writer.connect()
    try {
      const insert = `insert into public.tasks (team_id, created_by, title) values ($1, $2, $3)`
      await writer.query('begin')
      await writer.query(`select set_config('app.notify_after_commit', 'on', true)`)
      await writer.query(insert, [teamId, owner.user!.id, 'Announced by the app'])
      await writer.query('commit')
      await writer.query(insert, [teamId, owner.user!.id, 'Plain SQL'])
      await writer.query('notify tws_test_marker')
      // notifications arrive in commit order: once the marker has come, both writes' would have
      await waitFor('the marker', () => heard.includes('tws_test_marker'))
      expect(heard).toEqual(['record_events', 'tws_test_marker'])
    }
    finally {
      await writer.end()
      await listener.end()
    }
  })

  it('announces a write through the API once it has committed (the stream on the other process above relies on it)', async () => {
    const { listener, heard } = await listenTo('record_events')
    try {
      const created = await new KeyClient(first, key).post('/api/v1/tasks', { title: 'Announced' })
      expect(created.status).toBe(201)
      await waitFor('the announcement', () => heard.includes('record_events'))
    }
    finally {
      await listener.end()
    }
  })
})
