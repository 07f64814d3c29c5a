import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { teamWithRoles, type TeamFixture } from '../support/http'
import { connectApp, pkce, registerClient, requestIdOf, startAuthorization } from '../support/oauth'

// A member's agent: a member may create and update records but not delete them, so the consent
// page offers a member write, and the connection gets the tools of the actions the role allows,
// judged again at every call as the role changes.
let app: TestApp
let fx: TeamFixture

beforeAll(async () => {
  app = await startApp()
  fx = await teamWithRoles(app)
})
afterAll(() => app?.stop())

async function tools(token: string) {
  const client = new McpClient({ name: 'member-agent', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  const names = (await client.listTools()).tools.map(tool => tool.name).filter(name => name.endsWith('_tasks')).sort()
  return { client, names }
}

const setRole = async (role: string) => {
  const answer = await fx.owner.patch(`/api/teams/${fx.teamId}/members/${fx.member.user!.id}`, { role })
  expect(answer.status).toBe(200)
}

describe('a member\'s agent', () => {
  it('is offered write, meaning create and update', async () => {
    const clientId = await registerClient(app, ['http://127.0.0.1:9/callback'])
    const requestId = requestIdOf(await startAuthorization(fx.member, { clientId, redirectUri: 'http://127.0.0.1:9/callback', challenge: pkce().challenge }))
    const page = await fx.member.get(`/api/oauth/requests/${requestId}`)
    const tasks = page.body.teams.find((t: { id: string }) => t.id === fx.teamId).tables.find((t: { name: string }) => t.name === 'tasks')
    expect(tasks).toEqual({ name: 'tasks', most: 'write', write_actions: ['create', 'update'] })
    const owners = await fx.owner.get(`/api/oauth/requests/${requestIdOf(await startAuthorization(fx.owner, { clientId, redirectUri: 'http://127.0.0.1:9/callback', challenge: pkce().challenge }))}`)
    expect(owners.body.teams.find((t: { id: string }) => t.id === fx.teamId).tables.find((t: { name: string }) => t.name === 'tasks').write_actions).toEqual(['create', 'update', 'delete'])
  })

  it('gets the tools of the actions the role allows, judged at every call as the role changes', async () => {
    const { tokens } = await connectApp(fx.member, fx.teamId, { tasks: 'write' })
    const { rows: [grant] } = await app.db.query('select scopes from public.oauth_grants where user_id = $1', [fx.member.user!.id])
    expect(grant.scopes).toEqual({ tasks: 'write' })

    const asMember = await tools(tokens.access_token)
    expect(asMember.names).toEqual(['create_tasks', 'update_tasks'])
    const created = await asMember.client.callTool({ name: 'create_tasks', arguments: { title: 'By the member\'s agent' } })
    expect(created.isError).toBe(false)
    const id = (created.structuredContent as { record: { id: string } }).record.id
    const changed = await asMember.client.callTool({ name: 'update_tasks', arguments: { id, title: 'Changed by the agent' } })
    expect(changed.isError).toBe(false)
    await expect(asMember.client.callTool({ name: 'delete_tasks', arguments: { id } })).rejects.toThrow(/No tool named delete_tasks/)
    await asMember.client.close()

    // promoted: the same connection may delete
    await setRole('admin')
    const asAdmin = await tools(tokens.access_token)
    expect(asAdmin.names).toEqual(['create_tasks', 'delete_tasks', 'update_tasks'])
    await asAdmin.client.close()

    // demoted again: deleting is refused at the next call, and nothing is deleted
    await setRole('member')
    const demoted = await tools(tokens.access_token)
    expect(demoted.names).toEqual(['create_tasks', 'update_tasks'])
    await expect(demoted.client.callTool({ name: 'delete_tasks', arguments: { id } })).rejects.toThrow(/No tool named delete_tasks/)
    await demoted.client.close()
    const { rows } = await app.db.query('select title from public.tasks where id = $1', [id])
    expect(rows).toEqual([{ title: 'Changed by the agent' }])
  })
})
