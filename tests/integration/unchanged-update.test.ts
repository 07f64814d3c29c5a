import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { postTurn, userMessage } from '../support/chat'
import { appWithModelForFile } from '../support/file-hooks'
import { keyClientFor, teamWithRoles, type Client, type KeyClient, type TeamFixture } from '../support/http'
import type { ScriptedModelServer } from '../support/openai-server'

// An update that changes nothing does nothing, on every write path: the record keeps its
// updated_at and ETag, no activity entry is written and no webhook event is queued.
let app: TestApp
let model: ScriptedModelServer
let team: TeamFixture
let api: KeyClient
appWithModelForFile(() => ({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }), async (started) => {
  ({ app, model, team } = started)
  api = await keyClientFor(app, team, 'Unchanged')
  // the events are queued (and counted here) whether or not a receiver answers: none listens on port 9
  const endpoint = await team.owner.post(`/api/teams/${team.teamId}/webhooks/endpoints`, { url: 'http://127.0.0.1:9/hooks', events: ['*'] })
  expect(endpoint.status).toBe(201)
})

/** What an update leaves behind for a record: its stored updated_at, its activity entries and its queued events. */
async function traces(table: string, id: string) {
  const record = await app.db.query(`select updated_at from public.${table} where id = $1`, [id])
  const activity = await app.db.query(`select count(*)::int as n from public.activity_log where record_id = $1 and action = 'update'`, [id])
  const events = await app.db.query(`select count(*)::int as n from public.webhook_deliveries where event = $1 and body::jsonb -> 'data' ->> 'id' = $2`, [`${table}.updated`, id])
  return { updatedAt: record.rows[0].updated_at.toISOString(), updates: activity.rows[0].n, events: events.rows[0].n }
}

async function newTask(fields: Record<string, unknown> = {}) {
  const created = await api.post('/api/v1/tasks', { title: 'Steady', priority: 3, due_date: '2030-01-31', ...fields })
  expect(created.status).toBe(201)
  return created
}

describe('an update that changes nothing', () => {
  it('through the API: 200 with the record as it was, the same ETag, no activity entry, no event', async () => {
    const created = await newTask()
    const id = created.body.id
    const etag = created.headers.get('etag') ?? (await api.get(`/api/v1/tasks/${id}`)).headers.get('etag')
    const before = await traces('tasks', id)
    for (const body of [{ title: 'Steady' }, { priority: 3, due_date: '2030-01-31' }, { title: 'Steady', project_id: null }]) {
      const answer = await api.patch(`/api/v1/tasks/${id}`, body)
      expect(answer.status, JSON.stringify(body)).toBe(200)
      expect(answer.body).toEqual(created.body)
      expect(answer.headers.get('etag')).toBe(etag)
    }
    // with If-Match too, and the ETag still holds for the next writer
    const guarded = await api.patch(`/api/v1/tasks/${id}`, { title: 'Steady' }, { 'if-match': etag! })
    expect(guarded.status).toBe(200)
    expect(guarded.headers.get('etag')).toBe(etag)
    expect(await traces('tasks', id)).toEqual(before)
    const next = await api.patch(`/api/v1/tasks/${id}`, { title: 'Moved on' }, { 'if-match': etag! })
    expect(next.status).toBe(200)
    expect(next.headers.get('etag')).not.toBe(etag)
    const after = await traces('tasks', id)
    expect(after).toMatchObject({ updates: before.updates + 1, events: before.events + 1 })
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt))
  })

  it('through the browser\'s session routes', async () => {
    const created = await newTask({ title: 'Browser steady' })
    const id = created.body.id
    const before = await traces('tasks', id)
    const answer = await team.member.patch(`/api/teams/${team.teamId}/records/tasks/${id}`, { title: 'Browser steady', priority: 3 })
    expect(answer.status).toBe(200)
    expect(answer.body.updated_at).toBe(created.body.updated_at)
    expect(await traces('tasks', id)).toEqual(before)
    // a record of another team is still not found
    const stranger = await teamWithRoles(app)
    expect((await stranger.owner.patch(`/api/teams/${stranger.teamId}/records/tasks/${id}`, { title: 'Browser steady' })).status).toBe(404)
  })

  it('through a chat tool', async () => {
    const created = await newTask({ title: 'Chat steady' })
    const id = created.body.id
    const before = await traces('tasks', id)
    const chatId = (await team.member.post('/api/chats', {})).body.id
    model.enqueue({ toolCalls: [{ name: 'update_tasks', input: { id, title: 'Chat steady' } }] })
    const proposal = await streamed(team.member, chatId, userMessage('Rename the task to what it is'))
    const request = proposal.find(chunk => chunk.type === 'tool-approval-request')
    expect(request).toBeDefined()
    model.enqueue({ text: 'Nothing to change.' })
    const approved = await streamed(team.member, chatId, { approvals: [{ id: request!.approvalId, approved: true }] })
    expect(approved).toContainEqual(expect.objectContaining({
      type: 'tool-output-available',
      output: { record: expect.objectContaining({ id, title: 'Chat steady', updated_at: created.body.updated_at }) },
    }))
    expect(await traces('tasks', id)).toEqual(before)
  })

  it('by a statement on the database itself', async () => {
    const created = await newTask({ title: 'SQL steady' })
    const before = await traces('tasks', created.body.id)
    const { rowCount } = await app.db.query(`update public.tasks set title = title, updated_at = updated_at where id = $1`, [created.body.id])
    expect(rowCount).toBe(0)
    expect(await traces('tasks', created.body.id)).toEqual(before)
  })

  it('still answers 400 for a reference outside the team and 404 for an unknown id', async () => {
    const created = await newTask({ title: 'Referenced' })
    const bad = await api.patch(`/api/v1/tasks/${created.body.id}`, { project_id: randomUUID() })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatch(/^project_id: /)
    expect((await api.patch(`/api/v1/tasks/${randomUUID()}`, { title: 'Referenced' })).status).toBe(404)
  })
})

/** Posts a chat turn and returns the chunks of its UI message stream. */
async function streamed(client: Client, chatId: string, body: unknown): Promise<{ type: string, approvalId?: string, [key: string]: unknown }[]> {
  const turn = await postTurn(client, chatId, body)
  expect(turn.status).toBe(200)
  return turn.chunks
}
