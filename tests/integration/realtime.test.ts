import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js'
import WebSocket from 'ws'
import { afterEach, describe, expect, it } from 'vitest'
import { appWithTeamForFile } from '../support/file-hooks'
import type { TestApp } from '../support/app'
import { keyClientFor, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'

// supabase-js's realtime against the built app: channel().on('postgres_changes', ...).subscribe()
// with a team key, together with from() writes, on both of realtime-js's serializers.
let app: TestApp
let team: TeamFixture
appWithTeamForFile({}, (started) => {
  ;({ app, team } = started)
})

const clients: SupabaseClient[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.removeAllChannels()
})

function supabase(key: string, vsn?: '1.0.0' | '2.0.0'): SupabaseClient {
  const client = createClient(app.url, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    realtime: { transport: WebSocket as never, ...(vsn ? { vsn } : {}) },
  })
  clients.push(client)
  return client
}

interface Change {
  eventType: string
  table: string
  new: Record<string, any>
  old: Record<string, any>
}

/** Subscribes and resolves with the final status and its error (SUBSCRIBED, or CHANNEL_ERROR with the server's reason). */
function subscribe(channel: RealtimeChannel): Promise<{ status: string, error?: Error }> {
  return new Promise((resolve) => {
    channel.subscribe((status, error) => {
      if (status !== 'CLOSED') resolve({ status, error })
    })
  })
}

async function newKey(scopes?: Record<string, string>): Promise<string> {
  const answer = await team.owner.post(`/api/teams/${team.teamId}/api-keys`, scopes ? { name: 'Realtime', scopes } : { name: 'Realtime' })
  expect(answer.status).toBe(201)
  return answer.body.key
}

describe.each(['2.0.0', '1.0.0'] as const)('postgres_changes with serializer %s', (vsn) => {
  it('delivers INSERT, UPDATE and DELETE with whole new and old records, written with from()', async () => {
    const client = supabase(await newKey(), vsn)
    const changes: Change[] = []
    const channel = client.channel(`tasks-${vsn}`).on('postgres_changes', { event: '*', schema: 'public', table: 'tasks' }, payload => changes.push(payload as unknown as Change))
    expect((await subscribe(channel)).status).toBe('SUBSCRIBED')

    const { data: created, error } = await client.from('tasks').insert({ title: `Realtime ${vsn}`, priority: 2 }).select().single()
    expect(error).toBeNull()
    await client.from('tasks').update({ priority: 4 }).eq('id', created!.id)
    await client.from('tasks').delete().eq('id', created!.id)
    await waitFor('three changes', () => changes.length >= 3)
    expect(changes.map(c => c.eventType)).toEqual(['INSERT', 'UPDATE', 'DELETE'])
    expect(changes[0]).toMatchObject({ table: 'tasks', new: { id: created!.id, title: `Realtime ${vsn}`, priority: 2, team_id: team.teamId } })
    expect(changes[1]).toMatchObject({ new: { id: created!.id, priority: 4 }, old: { id: created!.id, priority: 2, title: `Realtime ${vsn}` } })
    expect(changes[2]).toMatchObject({ old: { id: created!.id, priority: 4, title: `Realtime ${vsn}` } })
  })
})

describe('realtime bindings and refusals', () => {
  it('matches each binding\'s event and filter (eq neq lt lte gt gte in), and echoes the bindings in order', async () => {
    const client = supabase(await newKey())
    const seen: Record<string, string[]> = {}
    const record = (name: string) => (payload: unknown) => {
      (seen[name] ??= []).push((payload as Change).new.title)
    }
    const channel = client.channel('filters')
    const filters = { eq: 'priority=eq.2', neq: 'priority=neq.2', lt: 'priority=lt.2', lte: 'priority=lte.2', gt: 'priority=gt.4', gte: 'priority=gte.4', in: 'priority=in.(1,5)' }
    for (const [name, filter] of Object.entries(filters)) channel.on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'tasks', filter }, record(name))
    channel.on('postgres_changes', { event: 'UPDATE', schema: 'public', table: 'tasks' }, record('updates'))
    expect((await subscribe(channel)).status).toBe('SUBSCRIBED')
    for (const priority of [1, 2, 3, 4, 5]) await client.from('tasks').insert({ title: `P${priority}`, priority })
    await waitFor('the in filter to see P5', () => seen.in?.includes('P5'))
    expect(seen).toEqual({
      eq: ['P2'], neq: ['P1', 'P3', 'P4', 'P5'], lt: ['P1'], lte: ['P1', 'P2'], gt: ['P5'], gte: ['P4', 'P5'], in: ['P1', 'P5'],
    })
  })

  it('refuses a table the key may not read, an unknown table, a bad filter and presence, with a reason', async () => {
    const client = supabase(await newKey({ projects: 'read' }))
    const cases: [string, (channel: RealtimeChannel) => RealtimeChannel, RegExp][] = [
      ['unreadable', c => c.on('postgres_changes', { event: '*', schema: 'public', table: 'tasks' }, () => {}), /may not read tasks/],
      ['unknown', c => c.on('postgres_changes', { event: '*', schema: 'public', table: 'nosuch' }, () => {}), /No table named "nosuch"/],
      ['bad-filter', c => c.on('postgres_changes', { event: '*', schema: 'public', table: 'projects', filter: 'name=like.x' }, () => {}), /operator "like"/],
      ['presence', c => c.on('presence', { event: 'sync' }, () => {}), /presence is not available/],
      ['broadcast', c => c.on('broadcast', { event: 'x' }, () => {}), /broadcast is not available/],
    ]
    for (const [name, bind, reason] of cases) {
      const result = await subscribe(bind(client.channel(name)))
      expect(result.status, name).toBe('CHANNEL_ERROR')
      expect(result.error?.message, name).toMatch(reason)
    }
  })

  it('sends only the key\'s team and readable tables', async () => {
    const projectsKey = await newKey({ projects: 'read' })
    const client = supabase(projectsKey)
    const changes: Change[] = []
    const channel = client.channel('all').on('postgres_changes', { event: '*', schema: 'public' }, payload => changes.push(payload as unknown as Change))
    expect((await subscribe(channel)).status).toBe('SUBSCRIBED')
    const writer = await keyClientFor(app, team, 'Writer')
    const outsiderTeam = (await app.db.query('select team_id from public.team_members where user_id = $1', [team.outsider.user!.id])).rows[0].team_id
    const outsiderKey = await keyClientFor(app, { teamId: outsiderTeam, owner: team.outsider }, 'Outsider')
    await outsiderKey.post('/api/v1/projects', { name: 'Another team\'s' })
    await writer.post('/api/v1/tasks', { title: 'Not readable' })
    await writer.post('/api/v1/projects', { name: 'Readable' })
    await waitFor('the readable project', () => changes.length >= 1)
    expect(changes.map(c => `${c.table}:${c.new.name ?? c.new.title}`)).toEqual(['projects:Readable'])
  })

  it('closes the socket when its key is revoked', async () => {
    const key = await newKey()
    const client = supabase(key)
    const statuses: string[] = []
    const channel = client.channel('revoked').on('postgres_changes', { event: '*', schema: 'public', table: 'tasks' }, () => {})
    await new Promise<void>((resolve) => {
      channel.subscribe((status) => {
        statuses.push(status)
        if (status === 'SUBSCRIBED') resolve()
      })
    })
    const keyId = (await app.db.query('select id from public.api_keys where team_id = $1 order by created_at desc limit 1', [team.teamId])).rows[0].id
    expect((await team.owner.patch(`/api/teams/${team.teamId}/api-keys/${keyId}`)).status).toBe(200)
    await waitFor('the channel to fail', () => statuses.some(status => status === 'CHANNEL_ERROR' || status === 'CLOSED'))
  })
})

describe('the Phoenix frames', () => {
  /** A raw socket speaking serializer 2.0.0 (arrays) or 1.0.0 (objects); `next` waits for a frame that matches. */
  async function rawSocket(query: string) {
    const socket = new WebSocket(`${app.url.replace('http', 'ws')}/realtime/v1/websocket?${query}`)
    const frames: any[] = []
    socket.on('message', raw => frames.push(JSON.parse(String(raw))))
    await new Promise((resolve, reject) => {
      socket.once('open', resolve)
      socket.once('error', reject)
    })
    const next = (match: (frame: any) => boolean) => waitFor('a frame', () => frames.find(match))
    return { socket, frames, next }
  }

  it('answers heartbeats, joins, leaves and refuses broadcast in the 2.0.0 array form', async () => {
    const key = await newKey()
    const { socket, next } = await rawSocket(`apikey=${key}&vsn=2.0.0`)
    socket.send(JSON.stringify([null, '1', 'phoenix', 'heartbeat', {}]))
    expect(await next(f => f[1] === '1')).toEqual([null, '1', 'phoenix', 'phx_reply', { status: 'ok', response: {} }])

    socket.send(JSON.stringify(['2', '2', 'realtime:raw', 'phx_join', { config: { postgres_changes: [{ event: 'INSERT', schema: 'public', table: 'tasks', filter: 'priority=gte.4' }] } }]))
    const joined = await next(f => f[1] === '2')
    expect(joined[4]).toEqual({ status: 'ok', response: { postgres_changes: [{ id: expect.any(Number), event: 'INSERT', schema: 'public', table: 'tasks', filter: 'priority=gte.4' }] } })
    expect(await next(f => f[3] === 'system')).toEqual(['2', null, 'realtime:raw', 'system', expect.objectContaining({ extension: 'postgres_changes', status: 'ok' })])

    socket.send(JSON.stringify(['2', '3', 'realtime:raw', 'broadcast', { type: 'broadcast', event: 'x', payload: {} }]))
    expect((await next(f => f[1] === '3'))[4]).toEqual({ status: 'error', response: { reason: expect.stringMatching(/broadcast is not available/) } })

    const writer = await keyClientFor(app, team, 'Raw writer')
    await writer.post('/api/v1/tasks', { title: 'Low', priority: 1 })
    await writer.post('/api/v1/tasks', { title: 'High', priority: 5 })
    const change = await next(f => f[3] === 'postgres_changes')
    expect(change[4]).toEqual({
      ids: [joined[4].response.postgres_changes[0].id],
      data: expect.objectContaining({ type: 'INSERT', schema: 'public', table: 'tasks', record: expect.objectContaining({ title: 'High' }), errors: null }),
    })

    socket.send(JSON.stringify(['2', '4', 'realtime:raw', 'phx_leave', {}]))
    expect((await next(f => f[1] === '4'))[4]).toEqual({ status: 'ok', response: {} })
    socket.close()
  })

  it('speaks the 1.0.0 object form, and refuses a join without a valid key with a reason', async () => {
    const { socket, next } = await rawSocket('apikey=not-a-real-key-but-long-enough&vsn=1.0.0')
    socket.send(JSON.stringify({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: '1', join_ref: null }))
    expect(await next(f => f.ref === '1')).toEqual({ topic: 'phoenix', event: 'phx_reply', payload: { status: 'ok', response: {} }, ref: '1', join_ref: null })
    socket.send(JSON.stringify({ topic: 'realtime:x', event: 'phx_join', payload: { config: { postgres_changes: [{ event: '*', schema: 'public', table: 'tasks' }] } }, ref: '2', join_ref: '2' }))
    expect((await next(f => f.ref === '2')).payload).toEqual({ status: 'error', response: { reason: 'Unknown API key' } })
    socket.close()
  })

  it('answers the upgrade with a Request-Id, and the opening is in the team\'s API log (refused keys too)', async () => {
    const key = await newKey()
    const opened = (query: string) => new Promise<{ requestId: string, socket: WebSocket }>((resolve, reject) => {
      const socket = new WebSocket(`${app.url.replace('http', 'ws')}/realtime/v1/websocket?${query}`, { headers: { 'user-agent': 'realtime-log-test', 'x-request-id': 'socket-42' } })
      socket.once('upgrade', response => resolve({ requestId: String(response.headers['request-id']), socket }))
      socket.once('error', reject)
    })
    const valid = await opened(`apikey=${key}&vsn=2.0.0`)
    expect(valid.requestId).toMatch(/^req_[0-9A-Za-z]{26,}$/)
    const keyId = (await app.db.query('select id from public.api_keys where team_id = $1 order by created_at desc limit 1', [team.teamId])).rows[0].id
    const entry = await waitFor('the socket\'s entry', async () => {
      const answer = await team.owner.get(`/api/teams/${team.teamId}/api-log/${valid.requestId}`)
      return answer.status === 200 ? answer.body : undefined
    })
    expect(entry).toMatchObject({ id: valid.requestId, api_key_id: keyId, source: 'realtime', method: 'GET', path: '/realtime/v1/websocket', status: 101, error_code: null, user_agent: 'realtime-log-test', client_request_id: 'socket-42' })
    expect(entry.query).not.toContain(key)
    valid.socket.close()

    expect((await team.owner.patch(`/api/teams/${team.teamId}/api-keys/${keyId}`)).status).toBe(200)
    const refused = await opened(`apikey=${key}&vsn=2.0.0`)
    const refusedEntry = await waitFor('the refused socket\'s entry', async () => {
      const answer = await team.owner.get(`/api/teams/${team.teamId}/api-log/${refused.requestId}`)
      return answer.status === 200 ? answer.body : undefined
    })
    expect(refusedEntry).toMatchObject({ api_key_id: keyId, source: 'realtime', status: 401, error_code: 'invalid_api_key' })
    refused.socket.close()
  })
})
