import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, teamWithRoles, type TeamFixture } from '../support/http'
import { startScriptedModel, type ScriptedModelServer } from '../support/openai-server'

// A table added by a migration alone (a test-only migrations folder) appears everywhere the
// registry feeds: the data pages, the session and public API routes, the OpenAPI document and the chat tools.
let app: TestApp
let model: ScriptedModelServer
let fx: TeamFixture

beforeAll(async () => {
  model = await startScriptedModel()
  app = await startApp({
    TEST_MIGRATIONS_DIR: resolve('tests/fixtures/migrations'),
    LLM_PROVIDER_API_KEY: 'test-key',
    LLM_PROVIDER_BASE_URL: model.url,
    LLM_MODEL: 'scripted-model',
  })
  fx = await teamWithRoles(app)
})
afterAll(async () => {
  await app?.stop()
  await model?.close()
})

describe('a table added by a migration', () => {
  it('is described by GET .../tables with its comments, allowed values and foreign keys', async () => {
    const answer = await fx.member.get(`/api/teams/${fx.teamId}/tables`)
    const widgets = answer.body.find((t: { name: string }) => t.name === 'widgets')
    expect(widgets).toMatchObject({ comment: 'A test-only table of widgets.', title_column: 'name', actions: { view: true, create: true, update: true, delete: false } })
    expect(widgets.columns.find((c: { name: string }) => c.name === 'size')).toMatchObject({ allowed_values: ['small', 'large'], comment: 'small or large.' })
    expect(widgets.columns.find((c: { name: string }) => c.name === 'project_id')).toMatchObject({ references: { table: 'projects', column: 'id' }, name_field: 'project_name' })
  })

  it('has session routes, logged as web, and public API routes, logged with the key', async () => {
    const created = await fx.member.post(`/api/teams/${fx.teamId}/records/widgets`, { name: 'Sprocket', size: 'large' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ name: 'Sprocket', size: 'large', team_id: fx.teamId })
    const bad = await fx.member.post(`/api/teams/${fx.teamId}/records/widgets`, { name: 'Cog', size: 'huge' })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatch(/^size:/)
    expect((await fx.member.delete(`/api/teams/${fx.teamId}/records/widgets/${created.body.id}`)).status).toBe(403)

    const key = (await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Widget sync' })).body
    const api = new Client(app)
    const viaKey = await api.request('POST', '/api/v1/widgets', { name: 'Gear' }, { authorization: `Bearer ${key.key}` })
    expect(viaKey.status).toBe(201)
    const list = await api.request('GET', '/api/v1/widgets', undefined, { authorization: `Bearer ${key.key}` })
    expect(list.body.map((w: { name: string }) => w.name).sort()).toEqual(['Gear', 'Sprocket'])

    const log = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=widgets`)
    expect(log.body.entries.map((e: { source: string, record_title: string, api_key_name: string | null }) => [e.source, e.record_title, e.api_key_name]))
      .toEqual([['api', 'Gear', 'Widget sync'], ['web', 'Sprocket', null]])

    const openapi = await new Client(app).get('/api/v1/openapi.json')
    expect(Object.keys(openapi.body.paths)).toContain('/api/v1/widgets')
  })

  it('gets a data page, linked from the sidebar, that lists its records', async () => {
    const html = (await fx.member.request('GET', '/app/data/widgets', undefined, { accept: 'text/html' })).body as string
    expect(html).toContain('href="/app/data/widgets"')
    expect(html).toContain('Sprocket')
    expect(html).toContain('A test-only table of widgets.')
  })

  it('gets chat tools for the role, and the chat may query it', async () => {
    const chat = await fx.member.post('/api/chats', { title: 'Widgets' })
    model.enqueue({ text: 'Hello.' })
    await fx.member.post(`/api/chats/${chat.body.id}`, { message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'Hi' }] } })
    const memberTools = (model.requests.at(-1)!.tools ?? []).map(t => t.function.name)
    expect(memberTools).toEqual(expect.arrayContaining(['create_widgets', 'update_widgets']))
    expect(memberTools).not.toContain('delete_widgets')

    const ownerChat = await fx.owner.post('/api/chats', { title: 'Widgets' })
    model.enqueue({ toolCalls: [{ name: 'query_database', input: { sql: 'select name from widgets order by name' } }] }, { text: 'Done.' })
    await fx.owner.post(`/api/chats/${ownerChat.body.id}`, { message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'List widgets' }] } })
    const ownerTools = (model.requests.at(-2)!.tools ?? []).map(t => t.function.name)
    expect(ownerTools).toContain('delete_widgets')
    const result = model.requests.at(-1)!.messages.findLast(m => m.role === 'tool')
    expect(JSON.stringify(result?.content)).toContain('Gear')
    expect(JSON.stringify(result?.content)).toContain('Sprocket')
  })
})
