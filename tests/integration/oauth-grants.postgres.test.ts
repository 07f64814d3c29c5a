import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { addMember, Client, createTeam, signUp } from '../support/http'
import { connectApp } from '../support/oauth'
import { waitFor } from '../support/wait'

// Two app processes on one Postgres database, each verifying OAuth access tokens from memory. A
// grant revoked through one (by its user, by an admin) is refused by that one at once and by the
// other within the bounds of API keys (a notification; 1 s here).
let a: TestApp
let b: TestApp
let owner: Client
let admin: Client
let teamId: string
beforeAll(async () => {
  a = await startApp()
  b = await startApp({}, { databaseUrl: a.databaseUrl })
  owner = await signUp(a, { name: 'Grant Owner' })
  teamId = await createTeam(owner, 'Granted')
  admin = await signUp(a, { name: 'Grant Admin' })
  await addMember(a, teamId, admin, 'admin')
})
afterAll(async () => {
  await b?.stop()
  await a?.stop()
})

const list = (app: TestApp, token: string) => fetch(`${app.url}/mcp`, {
  method: 'POST',
  headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
})

async function refusedOn(app: TestApp, token: string) {
  const started = Date.now()
  await waitFor(`a 401 from ${app.url}`, async () => (await list(app, token)).status === 401, { timeoutMs: 1_000, intervalMs: 10 })
  return Date.now() - started
}

describe('OAuth grants verified from memory on two processes', () => {
  it('a grant revoked by its user through one process is refused there at once and by the other within 1 s', async () => {
    const { tokens } = await connectApp(owner, teamId, { tasks: 'read' })
    for (const app of [a, b]) expect((await list(app, tokens.access_token)).status).toBe(200)
    const [grant] = (await owner.get(`/api/teams/${teamId}/grants`)).body
    expect((await owner.delete(`/api/teams/${teamId}/grants/${grant.id}`)).status).toBe(200)
    expect((await list(a, tokens.access_token)).status).toBe(401)
    console.info(`[oauth] revocation by the user seen by the other process after ${await refusedOn(b, tokens.access_token)} ms`)
  })

  it('a grant revoked by an admin through the other process, and a user removed from the team, are refused everywhere within 1 s', async () => {
    const { tokens } = await connectApp(owner, teamId, { tasks: 'read' })
    for (const app of [a, b]) expect((await list(app, tokens.access_token)).status).toBe(200)
    const grant = ((await admin.get(`/api/teams/${teamId}/grants`)).body as { id: string, revoked_at: string | null }[]).find(g => !g.revoked_at)!
    // the admin's session, used through the other process
    const adminOnB = new Client(b)
    adminOnB.cookie = admin.cookie
    expect((await adminOnB.delete(`/api/teams/${teamId}/grants/${grant.id}`)).status).toBe(200)
    expect((await list(b, tokens.access_token)).status).toBe(401)
    console.info(`[oauth] revocation by an admin seen by the other process after ${await refusedOn(a, tokens.access_token)} ms`)

    const member = await signUp(a, { name: 'Leaving Member' })
    await addMember(a, teamId, member, 'member')
    const leaving = await connectApp(member, teamId, { tasks: 'read' })
    for (const app of [a, b]) expect((await list(app, leaving.tokens.access_token)).status).toBe(200)
    expect((await owner.delete(`/api/teams/${teamId}/members/${member.user!.id}`)).status).toBeLessThan(300)
    for (const app of [a, b]) await refusedOn(app, leaving.tokens.access_token)
  })
})
