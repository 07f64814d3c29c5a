import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, teamWithRoles, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'
import { hiddenTableSpellings, hostileStatements, otherTeamPlaceholder } from '../unit/sql-guard-corpus'

// An AI agent's view of the team: the MCP SDK's own client over Streamable HTTP against the built
// app, holding a team API key.
let app: TestApp
let fx: TeamFixture
let otherTeamId: string
let receiver: WebhookReceiver | undefined

beforeAll(async () => {
  app = await startApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '100' })
  fx = await teamWithRoles(app)
  otherTeamId = (await fx.outsider.get('/api/auth/me')).body.teams.find((t: { name: string }) => t.name === 'Other Team').id
  const owner = fx.owner.user!.id
  await app.db.query(`insert into public.tasks (team_id, created_by, title) select $1, $2, 'Task ' || i from generate_series(1, 5) i`, [fx.teamId, owner])
  await app.db.query(`insert into public.tasks (team_id, created_by, title) values ($1, $2, 'OTHER-TEAM-SECRET')`, [otherTeamId, fx.outsider.user!.id])
})
afterAll(async () => {
  await receiver?.close()
  await app?.stop()
})

interface CreatedKey {
  id: string
  key: string
  name: string
}

async function createKey(name: string, scopes?: Record<string, string>): Promise<CreatedKey> {
  const answer = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name, ...(scopes ? { scopes } : {}) })
  expect(answer.status).toBe(201)
  return answer.body
}

/** The rate-limit headers of the answers the agent's client received, in order. */
const remainingSeen: number[] = []

async function connect(key: string): Promise<McpClient> {
  const client = new McpClient({ name: 'test-agent', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    fetch: async (url, init) => {
      const response = await fetch(url, init)
      const remaining = response.headers.get('ratelimit-remaining')
      if (remaining !== null && init?.method === 'POST') remainingSeen.push(Number(remaining))
      return response
    },
  })
  await client.connect(transport)
  return client
}

const toolNames = async (client: McpClient) => (await client.listTools()).tools.map(tool => tool.name).sort()

/** Calls a tool and answers what the client hands its caller: the structured output and whether it is an error. */
async function call(client: McpClient, name: string, args: Record<string, unknown>): Promise<{ output: any, isError: boolean }> {
  const result = await client.callTool({ name, arguments: args })
  expect(JSON.parse((result.content as { type: string, text: string }[])[0]!.text)).toEqual(result.structuredContent)
  return { output: result.structuredContent, isError: Boolean(result.isError) }
}

describe('authentication', () => {
  it('answers 401 with WWW-Authenticate naming the OAuth metadata without a key, and the client cannot connect', async () => {
    const answer = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp"`)
    await expect(connect('not-a-key')).rejects.toThrow()
  })

  it('refuses a revoked key and an expired (rolled) key with 401', async () => {
    const revoked = await createKey('Revoked agent')
    const client = await connect(revoked.key)
    expect(await toolNames(client)).toContain('query_database')
    expect((await fx.owner.patch(`/api/teams/${fx.teamId}/api-keys/${revoked.id}`, { revoked: true })).status).toBe(200)
    await expect(client.listTools()).rejects.toThrow()
    await expect(connect(revoked.key)).rejects.toThrow()

    const rolled = await createKey('Rolled agent')
    expect((await fx.owner.post(`/api/teams/${fx.teamId}/api-keys/${rolled.id}/roll`, { expires_in_seconds: 0 })).status).toBe(201)
    const raw = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'authorization': `Bearer ${rolled.key}`, 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' }, body: '{}' })
    expect(raw.status).toBe(401)
    expect(raw.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${app.url}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`)
    expect((await raw.json()).error).toMatch(/expired/)
  })
})

describe('tools by scope', () => {
  it('lists query_database and the typed writes of every table for a read-write key', async () => {
    const client = await connect((await createKey('Writer')).key)
    expect(await toolNames(client)).toEqual([
      'create_notes', 'create_projects', 'create_tasks', 'delete_notes', 'delete_projects', 'delete_tasks',
      'query_database', 'update_notes', 'update_projects', 'update_tasks',
    ])
    const createTasks = (await client.listTools()).tools.find(tool => tool.name === 'create_tasks')!
    const properties = createTasks.inputSchema.properties as Record<string, { enum?: string[], description?: string, anyOf?: unknown[] }>
    expect(properties.status!.enum).toEqual(['todo', 'in_progress', 'done'])
    expect(properties.project_id!.anyOf).toEqual([expect.objectContaining({ type: 'string', format: 'uuid' }), { type: 'null' }])
    expect(properties.project_id!.description).toMatch(/ References projects\.id\.$/)
    expect(createTasks.inputSchema.required).toEqual(['title'])
  })

  it('lists only query_database for a read-only key, and refuses a write tool it did not list', async () => {
    const client = await connect((await createKey('Reader', { '*': 'read' })).key)
    expect(await toolNames(client)).toEqual(['query_database'])
    await expect(client.callTool({ name: 'create_tasks', arguments: { title: 'Sneaky' } })).rejects.toThrow(/No tool named create_tasks/)
    const { rows } = await app.db.query(`select count(*)::int as n from public.tasks where title = 'Sneaky'`)
    expect(rows[0].n).toBe(0)
  })

  it('follows per-table scopes: query_database over the readable tables, writes on the writable ones', async () => {
    const client = await connect((await createKey('Tasks agent', { tasks: 'write', notes: 'read' })).key)
    expect(await toolNames(client)).toEqual(['create_tasks', 'delete_tasks', 'query_database', 'update_tasks'])
    const query = (await client.listTools()).tools.find(tool => tool.name === 'query_database')!
    expect(query.description).toContain('Tables: notes, tasks.')
    const { output, isError } = await call(client, 'query_database', { sql: 'select name from projects' })
    expect(isError).toBe(true)
    expect(output.error).toMatch(/^Refused: the table projects is not available; tables you can query: notes, tasks$/)
  })

  it('lists no tools for a key with only the webhooks scope', async () => {
    const client = await connect((await createKey('Hooks only', { webhooks: 'write' })).key)
    expect(await toolNames(client)).toEqual([])
  })
})

describe('calling the tools', () => {
  it('reads the team\'s rows with query_database, never another team\'s', async () => {
    const client = await connect((await createKey('Analyst', { '*': 'read' })).key)
    const { output, isError } = await call(client, 'query_database', { sql: 'select title from tasks order by title' })
    expect(isError).toBe(false)
    expect(output).toMatchObject({ columns: ['title'], row_count: 5 })
    expect(output.rows.map((row: string[]) => row[0])).toEqual(['Task 1', 'Task 2', 'Task 3', 'Task 4', 'Task 5'])
    const other = await call(client, 'query_database', { sql: `select title from tasks where team_id = '${otherTeamId}'` })
    expect(other.output.rows).toEqual([])
    expect(JSON.stringify(other.output)).not.toContain('OTHER-TEAM-SECRET')
  })

  it('creates, updates and deletes records, logged with source mcp, the key\'s creator and the key', async () => {
    const key = await createKey('Planning agent')
    const client = await connect(key.key)
    const project = await call(client, 'create_projects', { name: 'Agent project' })
    expect(project.isError).toBe(false)
    const created = await call(client, 'create_tasks', { title: 'Agent task', priority: 2, project_id: project.output.record.id })
    expect(created.output.record).toMatchObject({ title: 'Agent task', priority: 2, project_id: project.output.record.id, project_name: 'Agent project', team_id: fx.teamId })
    const taskId = created.output.record.id
    const updated = await call(client, 'update_tasks', { id: taskId, status: 'in_progress' })
    expect(updated.output.record).toMatchObject({ id: taskId, status: 'in_progress' })
    const deleted = await call(client, 'delete_tasks', { id: taskId })
    expect(deleted.output).toEqual({ deleted: taskId })
    const { rows } = await app.db.query('select count(*)::int as n from public.tasks where id = $1', [taskId])
    expect(rows[0].n).toBe(0)

    const log = await fx.owner.get(`/api/teams/${fx.teamId}/activity?source=mcp&record_id=${taskId}`)
    expect(log.body.entries.map((e: any) => [e.action, e.source, e.actor_id, e.source_ref, e.api_key_id, e.api_key_name])).toEqual([
      ['delete', 'mcp', fx.owner.user!.id, key.id, key.id, 'Planning agent'],
      ['update', 'mcp', fx.owner.user!.id, key.id, key.id, 'Planning agent'],
      ['insert', 'mcp', fx.owner.user!.id, key.id, key.id, 'Planning agent'],
    ])
  })

  it('answers a refused write as an error with the column\'s allowed values and constraints, writing nothing', async () => {
    const client = await connect((await createKey('Careless agent')).key)
    const bad = await call(client, 'create_tasks', { title: 'Bad status', status: 'finished' })
    expect(bad.isError).toBe(true)
    expect(bad.output).toMatchObject({ field: 'status', allowed_values: ['todo', 'in_progress', 'done'] })
    expect(bad.output.error).toMatch(/^status:/)
    const check = await call(client, 'create_tasks', { title: 'Done without date', status: 'done' })
    expect(check.isError).toBe(true)
    expect(check.output.constraints).toEqual([expect.objectContaining({ name: 'tasks_done_has_completed_at' })])
    const unknown = await call(client, 'update_tasks', { id: '00000000-0000-4000-8000-000000000000', title: 'Nobody' })
    expect(unknown.isError).toBe(true)
    const otherTask = (await app.db.query(`select id from public.tasks where team_id = $1`, [otherTeamId])).rows[0].id
    const foreign = await call(client, 'delete_tasks', { id: otherTask })
    expect(foreign.isError).toBe(true)
    expect(foreign.output.error).toMatch(/^No tasks record with this id in the team/)
    const { rows } = await app.db.query(`select count(*)::int as n from public.tasks where title in ('Bad status', 'Done without date') or title = 'OTHER-TEAM-SECRET' and team_id <> $1`, [otherTeamId])
    expect(rows[0].n).toBe(0)
    expect((await app.db.query('select count(*)::int as n from public.tasks where id = $1', [otherTask])).rows[0].n).toBe(1)
  })
})

describe('hostile SQL through query_database', () => {
  it('refuses every statement the chat refuses, before it runs, and nothing changes', async () => {
    const client = await connect((await createKey('Hostile agent')).key)
    const before = (await app.db.query('select count(*)::int as n from public.tasks')).rows[0].n
    const statements = [...hostileStatements, ...hiddenTableSpellings]
    for (const statement of statements) {
      const { output, isError } = await call(client, 'query_database', { sql: statement.sql.replaceAll(otherTeamPlaceholder, otherTeamId) })
      expect(isError, statement.name).toBe(true)
      expect(output.error, statement.name).toMatch(/^Refused: /)
      expect(JSON.stringify(output), statement.name).not.toContain('OTHER-TEAM-SECRET')
    }
    expect((await app.db.query('select count(*)::int as n from public.tasks')).rows[0].n).toBe(before)
    // a key never sees the activity log (no scope grants it)
    const log = await call(client, 'query_database', { sql: 'select count(*) from activity_log' })
    expect(log.output.error).toMatch(/^Refused: the table activity_log is not available/)
  })
})

describe('the rate limit', () => {
  it('counts every tool call, and refuses a batch that would carry several in one request', async () => {
    const client = await connect((await createKey('Counted agent')).key)
    remainingSeen.length = 0
    for (let i = 0; i < 3; i++) await call(client, 'query_database', { sql: 'select 1' })
    expect(remainingSeen).toHaveLength(3)
    expect(remainingSeen[1]).toBeLessThan(remainingSeen[0]!)
    expect(remainingSeen[2]).toBeLessThan(remainingSeen[1]!)

    const key = await createKey('Batching agent')
    const calls = [1, 2, 3].map(id => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'create_notes', arguments: { title: `Batched ${id}` } } }))
    const answer = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'authorization': `Bearer ${key.key}`, 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' }, body: JSON.stringify(calls) })
    expect(answer.status).toBe(400)
    expect((await answer.json()).error).toMatch(/one JSON-RPC message per request/)
    const { rows } = await app.db.query(`select count(*)::int as n from public.notes where title like 'Batched %'`)
    expect(rows[0].n).toBe(0)
  })
})

describe('record events of an agent\'s writes', () => {
  it('reach an endpoint a key subscribed, signed with the secret its create answer held', async () => {
    receiver = await startWebhookReceiver()
    const hooks = new KeyClient(app, (await createKey('Zap', { webhooks: 'write' })).key)
    const subscribed = await hooks.post('/api/v1/webhook-endpoints', { url: receiver.url, events: ['tasks.created'] })
    expect(subscribed.status).toBe(201)
    receiver.secret = subscribed.body.secret

    const client = await connect((await createKey('Event agent', { tasks: 'write' })).key)
    const created = await call(client, 'create_tasks', { title: 'Announced by an agent' })
    const [delivery] = await waitFor('the tasks.created delivery', async () => receiver!.received.length ? receiver!.received : undefined)
    expect(delivery!.verifyError).toBeNull()
    expect(delivery!.payload).toMatchObject({ type: 'tasks.created', data: { id: created.output.record.id, title: 'Announced by an agent' } })
  })
})
