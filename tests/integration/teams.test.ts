import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { appWithTeamForFile } from '../support/file-hooks'
import { Client, createTeam, signUp, teamWithRoles, type TeamFixture } from '../support/http'

let app: TestApp
let fx: TeamFixture
appWithTeamForFile({}, (started) => {
  ({ app, team: fx } = started)
})

const unknownTeam = '00000000-0000-4000-8000-00000000dead'

describe('POST /api/teams', () => {
  it('creates a team whose creator is its owner and makes it the current team', async () => {
    const user = await signUp(app)
    const answer = await user.post('/api/teams', { name: '  Rockets  ' })
    expect(answer.status).toBe(201)
    expect(answer.body).toMatchObject({ name: 'Rockets', webhook_url: null })
    const me = await user.get('/api/auth/me')
    expect(me.body.current_team_id).toBe(answer.body.id)
    expect(me.body.teams).toEqual([{ id: answer.body.id, name: 'Rockets', role: 'owner' }])
  })

  it('logs the team and the owner membership with source web', async () => {
    const user = await signUp(app, { name: 'Logger' })
    const teamId = await createTeam(user, 'Logged')
    const { rows } = await app.db.query(
      'select table_name, action, actor_id, source from public.activity_log where team_id = $1 order by table_name',
      [teamId],
    )
    expect(rows).toEqual([
      { table_name: 'team_members', action: 'insert', actor_id: user.user!.id, source: 'web' },
      { table_name: 'teams', action: 'insert', actor_id: user.user!.id, source: 'web' },
    ])
  })

  it.each([
    [{}, /^name:/],
    [{ name: '' }, /^name:/],
    [{ name: '   ' }, /^name:/],
    [{ name: 'x'.repeat(101) }, /^name: .*100/],
    [{ name: 12 }, /^name:/],
  ])('answers 400 for %j and creates nothing', async (body, message) => {
    const user = await signUp(app)
    const answer = await user.post('/api/teams', body)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
    expect((await user.get('/api/auth/me')).body.teams).toEqual([])
  })

  it('answers 401 when signed out', async () => {
    expect((await new Client(app).post('/api/teams', { name: 'x' })).status).toBe(401)
  })
})

describe('PUT /api/auth/current-team', () => {
  it('switches to a team the user belongs to', async () => {
    const user = await signUp(app)
    const first = await createTeam(user, 'First')
    await createTeam(user, 'Second')
    const answer = await user.put('/api/auth/current-team', { team_id: first })
    expect(answer).toMatchObject({ status: 200, body: { current_team_id: first } })
    expect((await user.get('/api/auth/me')).body.current_team_id).toBe(first)
  })

  it('answers 404 for a team the user is not a member of, 400 for a malformed id', async () => {
    const user = await signUp(app)
    expect((await user.put('/api/auth/current-team', { team_id: fx.teamId })).status).toBe(404)
    const malformed = await user.put('/api/auth/current-team', { team_id: 'nope' })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error).toMatch(/^team_id:/)
  })
})

describe('GET and PATCH /api/teams/{teamId}', () => {
  it('shows the team to any member and 404 to everyone else', async () => {
    for (const client of [fx.owner, fx.admin, fx.member]) {
      const answer = await client.get(`/api/teams/${fx.teamId}`)
      expect(answer.status).toBe(200)
      expect(answer.body).toMatchObject({ id: fx.teamId, name: expect.any(String), webhook_url: null })
      expect(Object.keys(answer.body).sort()).toEqual(['activity_retention_days', 'api_log_retention_days', 'created_at', 'id', 'name', 'webhook_url'])
    }
    expect((await fx.outsider.get(`/api/teams/${fx.teamId}`)).status).toBe(404)
    expect((await fx.anonymous.get(`/api/teams/${fx.teamId}`)).status).toBe(401)
    expect((await fx.owner.get(`/api/teams/${unknownTeam}`)).status).toBe(404)
    expect((await fx.owner.get(`/api/teams/not-a-uuid`)).status).toBe(404)
  })

  it('lets owners and admins rename and set or clear the webhook URL', async () => {
    const renamed = await fx.admin.patch(`/api/teams/${fx.teamId}`, { name: 'Renamed', webhook_url: 'https://hooks.example.com/in' })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ name: 'Renamed', webhook_url: 'https://hooks.example.com/in' })
    const cleared = await fx.owner.patch(`/api/teams/${fx.teamId}`, { webhook_url: null })
    expect(cleared.body).toMatchObject({ name: 'Renamed', webhook_url: null })
  })

  it('answers 403 to a member, 404 to an outsider, 401 when signed out, and changes nothing', async () => {
    expect((await fx.member.patch(`/api/teams/${fx.teamId}`, { name: 'Hijack' })).status).toBe(403)
    expect((await fx.outsider.patch(`/api/teams/${fx.teamId}`, { name: 'Hijack' })).status).toBe(404)
    expect((await fx.anonymous.patch(`/api/teams/${fx.teamId}`, { name: 'Hijack' })).status).toBe(401)
    const { rows } = await app.db.query('select name from public.teams where id = $1', [fx.teamId])
    expect(rows[0].name).not.toBe('Hijack')
  })

  it.each([
    [{ webhook_url: 'ftp://example.com' }, /^webhook_url:/],
    [{ webhook_url: 'not a url' }, /^webhook_url:/],
    [{ webhook_url: `https://example.com/${'a'.repeat(2100)}` }, /^webhook_url:/],
    [{ name: '' }, /^name:/],
    [{ name: ['x'] }, /^name:/],
  ])('answers 400 for %j', async (body, message) => {
    const answer = await fx.owner.patch(`/api/teams/${fx.teamId}`, body)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
  })
})

describe('members', () => {
  it('lists members with name, e-mail and role for every member, never for outsiders', async () => {
    const answer = await fx.member.get(`/api/teams/${fx.teamId}/members`)
    expect(answer.status).toBe(200)
    expect(answer.body.map((m: { role: string }) => m.role)).toEqual(['owner', 'admin', 'member'])
    expect(answer.body[0]).toEqual({
      user_id: fx.owner.user!.id,
      name: 'Olive Owner',
      email: fx.owner.user!.email,
      role: 'owner',
      created_at: expect.any(String),
    })
    expect((await fx.outsider.get(`/api/teams/${fx.teamId}/members`)).status).toBe(404)
    expect((await fx.anonymous.get(`/api/teams/${fx.teamId}/members`)).status).toBe(401)
  })

  it('follows the owner rules when changing roles', async () => {
    const { teamId, owner, admin, member } = await teamWithRoles(app)
    const path = (user: Client) => `/api/teams/${teamId}/members/${user.user!.id}`
    // a member may not change roles
    expect((await member.patch(path(admin), { role: 'member' })).status).toBe(403)
    // an admin may not grant owner nor change an owner
    expect((await admin.patch(path(member), { role: 'owner' })).status).toBe(403)
    expect((await admin.patch(path(owner), { role: 'member' })).status).toBe(403)
    // an admin may promote a member to admin
    const promoted = await admin.patch(path(member), { role: 'admin' })
    expect(promoted).toMatchObject({ status: 200, body: { user_id: member.user!.id, role: 'admin' } })
    // the last owner cannot step down
    const lastOwner = await owner.patch(path(owner), { role: 'admin' })
    expect(lastOwner.status).toBe(409)
    expect(lastOwner.body.error).toMatch(/at least one owner/)
    // with a second owner, the first may step down
    expect((await owner.patch(path(admin), { role: 'owner' })).status).toBe(200)
    expect((await owner.patch(path(owner), { role: 'member' })).status).toBe(200)
    const roles = await app.db.query('select user_id, role from public.team_members where team_id = $1', [teamId])
    expect(Object.fromEntries(roles.rows.map(r => [r.user_id, r.role]))).toEqual({
      [owner.user!.id]: 'member', [admin.user!.id]: 'owner', [member.user!.id]: 'admin',
    })
  })

  it('answers 400 for an unknown role and 404 for a user who is not a member', async () => {
    const bad = await fx.owner.patch(`/api/teams/${fx.teamId}/members/${fx.member.user!.id}`, { role: 'superuser' })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatch(/^role:/)
    expect((await fx.owner.patch(`/api/teams/${fx.teamId}/members/${fx.outsider.user!.id}`, { role: 'member' })).status).toBe(404)
    expect((await fx.owner.patch(`/api/teams/${fx.teamId}/members/123`, { role: 'member' })).status).toBe(404)
  })

  it('follows the owner rules when removing members', async () => {
    const { teamId, owner, admin, member, outsider } = await teamWithRoles(app)
    const path = (user: Client) => `/api/teams/${teamId}/members/${user.user!.id}`
    expect((await member.delete(path(admin))).status).toBe(403)
    expect((await admin.delete(path(owner))).status).toBe(403)
    expect((await outsider.delete(path(member))).status).toBe(404)
    expect((await owner.delete(path(owner))).status).toBe(409)
    expect((await admin.delete(path(member))).status).toBe(204)
    // a member may leave by themself
    expect((await admin.delete(path(admin))).status).toBe(204)
    const { rows } = await app.db.query('select user_id from public.team_members where team_id = $1', [teamId])
    expect(rows.map(r => r.user_id)).toEqual([owner.user!.id])
    // the removal is in the activity log
    const log = await app.db.query(
      `select actor_id, source from public.activity_log where team_id = $1 and table_name = 'team_members' and action = 'delete' order by created_at`,
      [teamId],
    )
    expect(log.rows).toEqual([{ actor_id: admin.user!.id, source: 'web' }, { actor_id: admin.user!.id, source: 'web' }])
  })

  it('keeps one owner when two owners demote each other at the same time', async () => {
    const { teamId, owner, admin } = await teamWithRoles(app)
    await owner.patch(`/api/teams/${teamId}/members/${admin.user!.id}`, { role: 'owner' })
    const answers = await Promise.all([
      owner.patch(`/api/teams/${teamId}/members/${admin.user!.id}`, { role: 'member' }),
      admin.patch(`/api/teams/${teamId}/members/${owner.user!.id}`, { role: 'member' }),
    ])
    // one demotion wins; the other finds its actor no longer allowed (403) or the owner alone (409)
    const statuses = answers.map(a => a.status).sort()
    expect(statuses[0]).toBe(200)
    expect([403, 409]).toContain(statuses[1])
    const { rows } = await app.db.query(`select count(*)::int as n from public.team_members where team_id = $1 and role = 'owner'`, [teamId])
    expect(rows[0].n).toBe(1)
  })
})
