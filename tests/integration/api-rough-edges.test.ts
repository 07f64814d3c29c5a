import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { openEventStream, type OpenStream } from '../support/event-stream'
import { keyClientFor, teamWithRoles, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'

// What an integration author meets at the edges: an MCP call's error in the API log and tool
// descriptions that read as sentences; session routes that take JSON only; a resumed event stream
// that opens with its preamble.
let app: TestApp
let fx: TeamFixture
const streams: OpenStream[] = []

beforeAll(async () => {
  app = await startApp({ API_LOG_FLUSH_MS: '100' })
  fx = await teamWithRoles(app)
})
afterAll(async () => {
  for (const stream of streams) stream.close()
  await app?.stop()
})

async function connect(key: string): Promise<McpClient> {
  const client = new McpClient({ name: 'edge-agent', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return client
}

describe('MCP', () => {
  it('logs a call to an unknown tool, and a tool that failed, with their error codes', async () => {
    const created = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Agent' })
    const client = await connect(created.body.key)
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/No tool named no_such_tool/)
    const failed = await client.callTool({ name: 'create_tasks', arguments: { title: '' } })
    expect(failed.isError).toBe(true)
    const ok = await client.callTool({ name: 'create_tasks', arguments: { title: 'Fine' } })
    expect(ok.isError).toBe(false)
    await client.close()
    const calls = await waitFor('the three tool calls in the log', async () => {
      const page = await fx.owner.get(`/api/teams/${fx.teamId}/api-log?api_key_id=${created.body.id}&source=mcp`)
      const found = (page.body.entries ?? []).filter((entry: { mcp_method: string }) => entry.mcp_method === 'tools/call')
      return found.length >= 3 ? found : undefined
    })
    const byTool = (tool: string, ok: boolean) => calls.filter((entry: { mcp_tool: string, error_code: string | null }) => entry.mcp_tool === tool && (entry.error_code === null) === ok)
    expect(calls.find((entry: { mcp_tool: string }) => entry.mcp_tool === 'no_such_tool')).toMatchObject({ status: 200, error_code: 'unknown_tool' })
    expect(byTool('create_tasks', false)[0]).toMatchObject({ status: 200, error_code: 'tool_failed' })
    expect(byTool('create_tasks', true)).toHaveLength(1)
  })

  it('describes every input field in sentences', async () => {
    const created = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Reader of tools' })
    const client = await connect(created.body.key)
    const { tools } = await client.listTools()
    await client.close()
    const create = tools.find(tool => tool.name === 'create_tasks')!
    const properties = create.inputSchema.properties as Record<string, { description?: string }>
    expect(properties.project_id!.description).toBe('The project this task belongs to (a project of the same team). References projects.id.')
    for (const tool of tools) {
      for (const [name, property] of Object.entries((tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>)) {
        if (!property.description) continue
        expect(property.description, `${tool.name}.${name}`).not.toMatch(/;\s*references|\.;/)
        expect(property.description, `${tool.name}.${name}`).toMatch(/[.!?)]$/)
      }
    }
  })
})

describe('session routes take JSON only', () => {
  it('refuses a form body with 415 and writes nothing; JSON works; the browser\'s own sign-in form still posts', async () => {
    const before = (await fx.owner.get('/api/auth/me')).body.teams.length
    const form = await fetch(`${app.url}/api/teams`, {
      method: 'POST',
      headers: { 'cookie': fx.owner.cookie, 'content-type': 'application/x-www-form-urlencoded', 'origin': app.url },
      body: 'name=Form+Team',
    })
    expect(form.status).toBe(415)
    expect(await form.json()).toMatchObject({ code: 'unsupported_media_type', error: expect.stringMatching(/application\/json/) })
    const text = await fetch(`${app.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'text/plain', 'origin': app.url }, body: '{"email":"a@example.com","password":"x"}' })
    expect(text.status).toBe(415)
    expect((await fx.owner.get('/api/auth/me')).body.teams.length).toBe(before)
    expect((await fx.owner.post('/api/teams', { name: 'JSON Team' })).status).toBe(201)

    const signIn = await fetch(`${app.url}/auth/sign-in?redirect=/app`, {
      method: 'POST', redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'origin': app.url },
      body: new URLSearchParams({ email: fx.owner.user!.email, password: 'correct horse battery' }).toString(),
    })
    expect(signIn.status).toBe(303)
    expect(signIn.headers.get('location')).toBe('/app')
    // OAuth's token endpoint takes a form, as the standard says (refused here for the code, not the type)
    const token = await fetch(`${app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=nope&client_id=nope' })
    expect(token.status).not.toBe(415)
    expect(token.status).toBeLessThan(500)
  })
})

describe('a resumed event stream', () => {
  it('sends retry: and its opening comment before the replayed events', async () => {
    const key = await keyClientFor(app, fx, 'Resumer')
    const first = await key.post('/api/v1/tasks', { title: 'Missed 1' })
    await key.post('/api/v1/tasks', { title: 'Missed 2' })
    // the feed shows an event once every transaction before it has committed
    const missed1 = await waitFor('the first event in the feed', async () => {
      const feed = await key.get('/api/v1/events?after=0&limit=100')
      return feed.body.find((event: { data: { id: string } }) => event.data.id === first.body.id)
    })
    const stream = openEventStream(`${app.url}/api/v1/events/stream`, key.key, ['tasks.created'], { 'last-event-id': missed1.id })
    streams.push(stream)
    await waitFor('the replayed event', () => stream.messages.length >= 1)
    expect(stream.messages.map(message => message.data.data.title)).toEqual(['Missed 2'])
    const raw = stream.raw()
    expect(raw.startsWith('retry: 1000\n: connected\n\n')).toBe(true)
    expect(raw.indexOf('retry:')).toBeLessThan(raw.indexOf('id: '))
  })
})
