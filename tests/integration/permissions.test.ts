import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { addMember, signUp, teamWithRoles, type Client, type TeamFixture } from '../support/http'

let app: TestApp
let fx: TeamFixture
let target: Client
beforeAll(async () => {
  app = await startApp()
  fx = await teamWithRoles(app)
  target = await signUp(app, { name: 'Target' })
  await addMember(app, fx.teamId, target, 'member')
})
afterAll(() => app?.stop())

type Actor = 'owner' | 'admin' | 'member' | 'outsider' | 'anonymous'
const actors: Actor[] = ['owner', 'admin', 'member', 'outsider', 'anonymous']

interface RouteCase {
  name: string
  call: (client: Client) => Promise<{ status: number }>
  /** expected status for each actor */
  expected: Record<Actor, number>
}

const adminOnly = (ok: number): Record<Actor, number> => ({ owner: ok, admin: ok, member: 403, outsider: 404, anonymous: 401 })
const anyMember = (ok: number): Record<Actor, number> => ({ owner: ok, admin: ok, member: ok, outsider: 404, anonymous: 401 })

const routes: RouteCase[] = [
  { name: 'GET /api/teams/{teamId}', call: c => c.get(`/api/teams/${fx.teamId}`), expected: anyMember(200) },
  { name: 'PATCH /api/teams/{teamId}', call: c => c.patch(`/api/teams/${fx.teamId}`, { name: 'Matrix Team' }), expected: adminOnly(200) },
  { name: 'GET /api/teams/{teamId}/members', call: c => c.get(`/api/teams/${fx.teamId}/members`), expected: anyMember(200) },
  {
    name: 'PATCH /api/teams/{teamId}/members/{userId}',
    call: c => c.patch(`/api/teams/${fx.teamId}/members/${target.user!.id}`, { role: 'member' }),
    expected: adminOnly(200),
  },
  { name: 'GET /api/teams/{teamId}/activity', call: c => c.get(`/api/teams/${fx.teamId}/activity`), expected: adminOnly(200) },
]

describe('permission matrix of the session routes', () => {
  for (const route of routes) {
    it.each(actors)(`${route.name} as %s`, async (actor) => {
      const answer = await route.call(fx[actor])
      expect(answer.status).toBe(route.expected[actor])
    })
  }

  it.each(actors)('DELETE /api/teams/{teamId}/members/{userId} of another member as %s', async (actor) => {
    const victim = await signUp(app)
    await addMember(app, fx.teamId, victim, 'member')
    const answer = await fx[actor].delete(`/api/teams/${fx.teamId}/members/${victim.user!.id}`)
    expect(answer.status).toBe(adminOnly(204)[actor])
    const { rows } = await app.db.query('select count(*)::int as n from public.team_members where team_id = $1 and user_id = $2', [fx.teamId, victim.user!.id])
    expect(rows[0].n).toBe(answer.status === 204 ? 0 : 1)
  })

  it.each(['POST /api/teams', 'GET /api/auth/me', 'PUT /api/auth/current-team'])('%s as anonymous is 401', async (route) => {
    const [method, path] = route.split(' ') as [string, string]
    const answer = await fx.anonymous.request(method, path, method === 'GET' ? undefined : { name: 'x', team_id: fx.teamId })
    expect(answer.status).toBe(401)
  })
})
