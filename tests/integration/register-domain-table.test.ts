import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, teamWithRoles, type TeamFixture } from '../support/http'
import { startScriptedModel, type ScriptedModelServer } from '../support/openai-server'

// tests/fixtures/contacts-migrations holds one migration: CREATE TABLE contacts, then
// select public.register_domain_table('contacts'). Nothing else in the code names the table.
let app: TestApp
let model: ScriptedModelServer
let fx: TeamFixture
let otherTeamId: string

beforeAll(async () => {
  model = await startScriptedModel()
  app = await startApp({
    TEST_MIGRATIONS_DIR: resolve('tests/fixtures/contacts-migrations'),
    LLM_PROVIDER_API_KEY: 'test-key',
    LLM_PROVIDER_BASE_URL: model.url,
    LLM_MODEL: 'scripted-model',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  })
  fx = await teamWithRoles(app)
  otherTeamId = (await fx.outsider.get('/api/auth/me')).body.teams.find((t: { name: string }) => t.name === 'Other Team').id
  await app.db.query(`insert into public.contacts (team_id, created_by, name) values ($1, $2, 'OTHER-TEAM-CONTACT')`, [otherTeamId, fx.outsider.user!.id])
})
afterAll(async () => {
  await app?.stop()
  await model?.close()
})

/** What register_domain_table makes of a table, with the ids of the triggers and policies (a re-creation changes them). */
async function pieces(table: string) {
  const read = async (sql: string) => (await app.db.query(sql, [table])).rows
  return {
    rls: await read(`select relrowsecurity from pg_class where oid = ('public.' || $1)::regclass`),
    policies: await read(`select p.oid::text, p.polname, p.polroles::text, pg_get_expr(p.polqual, p.polrelid) as qual
      from pg_policy p where p.polrelid = ('public.' || $1)::regclass order by p.polname`),
    triggers: await read(`select t.oid::text, t.tgname, t.tgnargs, encode(t.tgargs, 'escape') as args, pg_get_triggerdef(t.oid) as definition
      from pg_trigger t where t.tgrelid = ('public.' || $1)::regclass and not t.tgisinternal order by t.tgname`),
    grants: await read(`select grantee, privilege_type from information_schema.role_table_grants
      where table_schema = 'public' and table_name = $1 order by grantee, privilege_type`),
    indexes: await read(`select indexname, indexdef from pg_indexes where schemaname = 'public' and tablename = $1 order by indexname`),
    updatedAt: await read(`select format_type(atttypid, atttypmod) as type, pg_get_expr(d.adbin, d.adrelid) as default
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attrelid = ('public.' || $1)::regclass and a.attname = 'updated_at'`),
  }
}

describe('register_domain_table', () => {
  it('gives the table row-level security, both read policies, updated_at, the activity and record-event triggers and the grants', async () => {
    const contacts = await pieces('contacts')
    expect(contacts.rls).toEqual([{ relrowsecurity: true }])
    expect(contacts.policies.map(p => p.polname)).toEqual(['chat reads the chat team\'s contacts', 'members read their team\'s contacts'])
    expect(contacts.triggers.map(t => t.tgname)).toEqual(['activity_log', 'record_events', 'record_events_created', 'record_events_deleted', 'record_webhooks', 'record_webhooks_created', 'record_webhooks_deleted', 'skip_unchanged_update', 'touch_updated_at'])
    expect(contacts.grants).toEqual(expect.arrayContaining([{ grantee: 'authenticated', privilege_type: 'SELECT' }, { grantee: 'chat_reader', privilege_type: 'SELECT' }]))
    expect(contacts.updatedAt).toEqual([{ type: 'timestamp(3) with time zone', default: expect.stringContaining('date_trunc') }])
  })

  it('changes nothing when called again, or on the example tables whose migrations made every piece by hand', async () => {
    for (const table of ['contacts', 'projects', 'tasks', 'notes']) {
      const before = await pieces(table)
      await app.db.query('select public.register_domain_table($1)', [table])
      expect(await pieces(table), table).toEqual(before)
    }
    // the example tables' activity trigger is still the one their own migration made (one argument),
    // not one this function would make: the migration that calls it for them changed nothing
    const { rows } = await app.db.query(`select tgrelid::regclass::text as t, tgnargs from pg_trigger where tgname = 'activity_log' and tgrelid::regclass::text in ('projects', 'tasks', 'notes') order by 1`)
    expect(rows).toEqual([{ t: 'notes', tgnargs: 1 }, { t: 'projects', tgnargs: 1 }, { t: 'tasks', tgnargs: 1 }])
  })

  it('refuses a table that is missing or lacks the domain columns, naming why', async () => {
    await expect(app.db.query(`select public.register_domain_table('nowhere')`)).rejects.toThrow(/no table public\.nowhere exists/)
    await app.db.query('create table public.loose_things (id uuid primary key, name text)')
    await expect(app.db.query(`select public.register_domain_table('loose_things')`)).rejects.toThrow(/needs the columns team_id, created_by and created_at/)
    await app.db.query('drop table public.loose_things')
  })
})

describe('a table made by one migration and that call', () => {
  it('is in the data pages, the public API, OpenAPI and the activity log, and raises record events', async () => {
    const tables = await fx.member.get(`/api/teams/${fx.teamId}/tables`)
    const contacts = tables.body.find((t: { name: string }) => t.name === 'contacts')
    expect(contacts).toMatchObject({ actions: { view: true, create: true, update: true, delete: false } })
    expect(contacts.columns.find((c: { name: string }) => c.name === 'stage')).toMatchObject({ allowed_values: ['lead', 'customer', 'former'] })

    const hook = await fx.owner.post(`/api/teams/${fx.teamId}/webhooks/endpoints`, { url: 'http://127.0.0.1:9/hook', events: ['contacts.created', 'contacts.updated'] })
    expect(hook.status).toBe(201)

    const key = (await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'CRM sync' })).body
    const api = new KeyClient(app, key.key)
    const created = await api.post('/api/v1/contacts', { name: 'Ada Lovelace', email: 'ada@example.com' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ name: 'Ada Lovelace', stage: 'lead', team_id: fx.teamId, updated_at: expect.any(String) })
    const changed = await api.patch(`/api/v1/contacts/${created.body.id}`, { stage: 'customer' })
    expect(changed.status).toBe(200)
    const bad = await api.post('/api/v1/contacts', { name: 'Bad', stage: 'friend' })
    expect(bad.status).toBe(400)
    const list = await api.get('/api/v1/contacts')
    expect(list.body.map((c: { name: string }) => c.name)).toEqual(['Ada Lovelace'])

    const openapi = await api.get('/api/v1/openapi.json')
    expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(['/api/v1/contacts', '/api/v1/contacts/{id}']))

    const log = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=contacts`)
    expect(log.body.entries.map((e: any) => [e.action, e.source, e.api_key_name, e.record_title])).toEqual([
      ['update', 'api', 'CRM sync', 'Ada Lovelace'],
      ['insert', 'api', 'CRM sync', 'Ada Lovelace'],
    ])

    const { rows } = await app.db.query(`select event, body::jsonb -> 'data' as data from public.webhook_deliveries where endpoint_id = $1 order by created_at`, [hook.body.id])
    expect(rows.map(r => r.event)).toEqual(['contacts.created', 'contacts.updated'])
    expect(rows[1].data).toMatchObject({ id: created.body.id, stage: 'customer', previous: { stage: 'lead' } })
  })

  it('is in the chat\'s query_database, bound to the team, and its write tools', async () => {
    await app.db.query(`insert into public.contacts (team_id, created_by, name) values ($1, $2, 'Grace Hopper')`, [fx.teamId, fx.owner.user!.id])
    const chat = await fx.member.post('/api/chats', { title: 'Contacts' })
    model.enqueue({ toolCalls: [{ name: 'query_database', input: { sql: 'select name from contacts order by name' } }] }, { text: 'Done.' })
    await fx.member.post(`/api/chats/${chat.body.id}`, { message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'List contacts' }] } })
    const tools = (model.requests.at(-2)!.tools ?? []).map(t => t.function.name)
    expect(tools).toEqual(expect.arrayContaining(['create_contacts', 'update_contacts']))
    const result = JSON.stringify(model.requests.at(-1)!.messages.findLast(m => m.role === 'tool')?.content)
    expect(result).toContain('Grace Hopper')
    expect(result).not.toContain('OTHER-TEAM-CONTACT')
  })

  it('is in the MCP tools', async () => {
    const key = (await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'CRM agent', scopes: { contacts: 'write' } })).body
    const client = new McpClient({ name: 'test-agent', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key.key}` } } }))
    expect((await client.listTools()).tools.map(t => t.name).sort()).toEqual(['create_contacts', 'delete_contacts', 'query_database', 'update_contacts'])
    const created = await client.callTool({ name: 'create_contacts', arguments: { name: 'Katherine Johnson', stage: 'customer' } })
    expect(created.structuredContent).toMatchObject({ record: { name: 'Katherine Johnson', stage: 'customer' } })
    const query = await client.callTool({ name: 'query_database', arguments: { sql: 'select name from contacts order by name' } })
    expect((query.structuredContent as { rows: string[][] }).rows.map(r => r[0])).toEqual(['Ada Lovelace', 'Grace Hopper', 'Katherine Johnson'])
    const log = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=contacts&source=mcp`)
    expect(log.body.entries.map((e: any) => [e.action, e.api_key_name, e.record_title])).toEqual([['insert', 'CRM agent', 'Katherine Johnson']])
  })
})
