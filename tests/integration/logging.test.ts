import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logLines, startApp, type TestApp } from '../support/app'
import { keyClientFor, teamWithRoles, type KeyClient } from '../support/http'
import { waitFor } from '../support/wait'

// The built app logs one JSON object a line, and a line a request causes carries that request's
// id (the Request-Id of its answer), though the code that logs is never handed the request.
let app: TestApp
let api: KeyClient
let mcpKey: string
beforeAll(async () => {
  app = await startApp()
  const team = await teamWithRoles(app)
  api = await keyClientFor(app, team, 'logger')
  mcpKey = (await team.owner.post(`/api/teams/${team.teamId}/api-keys`, { name: 'Agent' })).body.key
  // a write the database fails with an error the app does not expect: a 500, logged
  await app.db.query(`create function public.test_explode() returns trigger language plpgsql as $$
    begin raise exception 'the test trigger exploded' using errcode = 'XX000'; end $$`)
  await app.db.query(`create trigger test_explode before insert on public.tasks for each row
    when (new.title = 'explode') execute function public.test_explode()`)
})
afterAll(async () => {
  await app?.db.query('drop trigger if exists test_explode on public.tasks').catch(() => {})
  await app?.stop()
})

describe('the log of the built app', () => {
  it('writes the line of a failed request with that request\'s id', async () => {
    const failed = await api.post('/api/v1/tasks', { title: 'explode' })
    expect(failed.status).toBe(500)
    expect(failed.body.error).toBe('Internal server error')
    const requestId = failed.headers.get('request-id')
    expect(requestId).toMatch(/^req_[0-9A-Z]{26}$/)
    expect(failed.body.request_id).toBe(requestId)
    const line = await waitFor('the error line of the request', () => logLines(app).find(line => line.request_id === requestId && line.tag === 'api'))
    expect(line).toMatchObject({ level: 'error', tag: 'api', message: 'An unexpected error', method: 'POST', path: '/api/v1/tasks', status: 500 })
    expect((line.error as { message: string }).message).toMatch(/the test trigger exploded/)
    // the error is logged once, and a request that succeeds logs no error
    const ok = await api.post('/api/v1/tasks', { title: 'fine' })
    expect(ok.status).toBe(201)
    expect(logLines(app).filter(line => line.request_id === requestId && line.level === 'error' && line.tag === 'api')).toHaveLength(1)
    expect(logLines(app).filter(line => line.request_id === ok.headers.get('request-id') && line.level === 'error')).toEqual([])
  })

  it('writes a line logged deep in a service (an agent\'s failed write) with the id of the request that caused it', async () => {
    // the Request-Id of every answer the agent's client gets
    const answered: { id: string | null, method: string }[] = []
    const client = new McpClient({ name: 'logged-agent', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${mcpKey}` } },
      fetch: async (url, init) => {
        const response = await fetch(url, init)
        answered.push({ id: response.headers.get('request-id'), method: JSON.parse(String(init?.body ?? '{}')).method })
        return response
      },
    }))
    const failed = await client.callTool({ name: 'create_tasks', arguments: { title: 'explode' } })
    await client.close()
    expect(failed.isError).toBe(true)
    const call = answered.filter(answer => answer.method === 'tools/call')
    expect(call).toHaveLength(1)
    expect(call[0]!.id).toMatch(/^req_/)
    const line = await waitFor('the line of the failed write', () => logLines(app).find(line => line.message === 'A write tool failed'))
    expect(line).toMatchObject({ level: 'error', tag: 'mcp', request_id: call[0]!.id })
    expect((line.error as { message: string }).message).toMatch(/the test trigger exploded/)
  })

  it('prints every line as one JSON object with its time, level, tag and message', async () => {
    const lines = logLines(app)
    // the server's own start line (the console, routed through the logger) is one of them
    expect(lines).toContainEqual(expect.objectContaining({ level: 'info', tag: 'console', message: expect.stringMatching(/^Listening on /) }))
    for (const line of lines) {
      expect(new Date(line.time).toISOString()).toBe(line.time)
      expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(line.level)
      expect(typeof line.tag).toBe('string')
      expect(typeof line.message).toBe('string')
    }
    // nothing printed but whole lines
    expect(app.output.join('').endsWith('\n')).toBe(true)
  })
})
