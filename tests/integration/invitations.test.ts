import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { appWithTeamForFile } from '../support/file-hooks'
import { Client, addMember, signUp, uniqueEmail, type TeamFixture } from '../support/http'

let app: TestApp
let fx: TeamFixture
appWithTeamForFile({}, (started) => {
  ({ app, team: fx } = started)
})

const tokenOf = (inviteUrl: string) => inviteUrl.split('/invite/')[1]!

async function invite(client: Client, teamId: string, email = uniqueEmail('invitee'), role = 'member') {
  const answer = await client.post(`/api/teams/${teamId}/invitations`, { email, role })
  if (answer.status !== 201) throw new Error(`invite failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  return { ...answer.body, token: tokenOf(answer.body.invite_url) } as { id: string, email: string, role: string, invite_url: string, expires_at: string, token: string }
}

describe('permissions of the invitation routes', () => {
  it('lets owners and admins create, list and revoke; members get 403, outsiders 404, signed-out callers 401', async () => {
    for (const [who, client] of [['owner', fx.owner], ['admin', fx.admin]] as const) {
      const created = await client.post(`/api/teams/${fx.teamId}/invitations`, { email: uniqueEmail(who), role: 'member' })
      expect(created.status, who).toBe(201)
      expect((await client.get(`/api/teams/${fx.teamId}/invitations`)).status, who).toBe(200)
      expect((await client.delete(`/api/teams/${fx.teamId}/invitations/${created.body.id}`)).status, who).toBe(204)
    }
    const pending = await invite(fx.owner, fx.teamId)
    for (const [client, status] of [[fx.member, 403], [fx.outsider, 404], [fx.anonymous, 401]] as const) {
      expect((await client.post(`/api/teams/${fx.teamId}/invitations`, { email: uniqueEmail(), role: 'member' })).status).toBe(status)
      expect((await client.get(`/api/teams/${fx.teamId}/invitations`)).status).toBe(status)
      expect((await client.delete(`/api/teams/${fx.teamId}/invitations/${pending.id}`)).status).toBe(status)
    }
    const { rows } = await app.db.query('select revoked_at from public.invitations where id = $1', [pending.id])
    expect(rows[0].revoked_at).toBeNull()
  })
})

describe('POST /api/teams/{teamId}/invitations', () => {
  it('answers 201 with the invitation and a link whose token is stored only hashed and encrypted', async () => {
    const email = uniqueEmail('New')
    const before = Date.now()
    const answer = await fx.admin.post(`/api/teams/${fx.teamId}/invitations`, { email: email.toUpperCase(), role: 'admin' })
    expect(answer.status).toBe(201)
    expect(Object.keys(answer.body).sort()).toEqual(['created_at', 'email', 'expires_at', 'id', 'invite_url', 'role'])
    expect(answer.body).toMatchObject({ email: email.toLowerCase(), role: 'admin' })
    expect(answer.body.invite_url).toMatch(new RegExp(`^${app.url}/invite/[\\w-]{43}$`))
    const lifetime = Date.parse(answer.body.expires_at) - before
    expect(lifetime).toBeGreaterThan(7 * 86_400_000 - 60_000)
    expect(lifetime).toBeLessThan(7 * 86_400_000 + 60_000)
    const token = tokenOf(answer.body.invite_url)
    const { rows } = await app.db.query('select * from public.invitations where id = $1', [answer.body.id])
    expect(rows[0]).toMatchObject({ team_id: fx.teamId, email: email.toLowerCase(), role: 'admin', invited_by: fx.admin.user!.id, accepted_at: null, revoked_at: null })
    expect(rows[0].token_hash).toBe(createHash('sha256').update(token).digest('hex'))
    expect(JSON.stringify(rows[0])).not.toContain(token)
  })

  it.each([
    [{ role: 'member' }, /^email:/],
    [{ email: 'not-an-email', role: 'member' }, /^email:/],
    [{ email: 'a@example.com' }, /^role:/],
    [{ email: 'a@example.com', role: 'owner' }, /^role:/],
    [{ email: 'a@example.com', role: 'boss' }, /^role:/],
  ])('answers 400 naming the field for %j and writes nothing', async (body, message) => {
    const before = await app.db.query('select count(*)::int as n from public.invitations')
    const answer = await fx.owner.post(`/api/teams/${fx.teamId}/invitations`, body)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
    const after = await app.db.query('select count(*)::int as n from public.invitations')
    expect(after.rows[0].n).toBe(before.rows[0].n)
  })

  it('answers 409 for the e-mail of a member, in any case', async () => {
    const answer = await fx.owner.post(`/api/teams/${fx.teamId}/invitations`, { email: fx.member.user!.email.toUpperCase(), role: 'member' })
    expect(answer.status).toBe(409)
    expect(answer.body.error).toMatch(/already a member/)
  })

  it('answers 409 for an e-mail with a pending invitation, in any case, and allows a new one once it expired', async () => {
    const email = uniqueEmail('twice')
    const first = await invite(fx.owner, fx.teamId, email)
    const again = await fx.admin.post(`/api/teams/${fx.teamId}/invitations`, { email: email.toUpperCase(), role: 'admin' })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatch(/pending invitation/)
    await app.db.query(`update public.invitations set expires_at = now() - interval '1 minute' where id = $1`, [first.id])
    const renewed = await fx.admin.post(`/api/teams/${fx.teamId}/invitations`, { email, role: 'admin' })
    expect(renewed.status).toBe(201)
  })

  it('creates the invitation without queuing a webhook when the team has no webhook URL', async () => {
    const created = await invite(fx.owner, fx.teamId)
    expect(created.id).toBeTruthy()
    const { rows } = await app.db.query('select count(*)::int as n from public.webhook_deliveries where team_id = $1', [fx.teamId])
    expect(rows[0].n).toBe(0)
  })

  it('does not let two teams see each other\'s invitation by e-mail conflicts', async () => {
    const email = uniqueEmail('both')
    const otherTeam = (await fx.outsider.get('/api/auth/me')).body.teams[0].id
    await invite(fx.owner, fx.teamId, email)
    expect((await fx.outsider.post(`/api/teams/${otherTeam}/invitations`, { email, role: 'member' })).status).toBe(201)
  })
})

describe('GET /api/teams/{teamId}/invitations', () => {
  it('lists only pending invitations, newest first, with the inviter\'s name and the same link', async () => {
    const owner = await signUp(app, { name: 'Lister' })
    const teamId = (await owner.post('/api/teams', { name: 'List Team' })).body.id
    const first = await invite(owner, teamId, uniqueEmail('first'))
    const second = await invite(owner, teamId, uniqueEmail('second'), 'admin')
    const revoked = await invite(owner, teamId)
    const expired = await invite(owner, teamId)
    await owner.delete(`/api/teams/${teamId}/invitations/${revoked.id}`)
    await app.db.query(`update public.invitations set expires_at = now() - interval '1 second' where id = $1`, [expired.id])
    const answer = await owner.get(`/api/teams/${teamId}/invitations`)
    expect(answer.status).toBe(200)
    expect(answer.body.map((i: { id: string }) => i.id)).toEqual([second.id, first.id])
    expect(answer.body[0]).toEqual({
      id: second.id,
      email: second.email,
      role: 'admin',
      created_at: expect.any(String),
      expires_at: second.expires_at,
      invited_by_name: 'Lister',
      invite_url: second.invite_url,
    })
  })
})

describe('DELETE /api/teams/{teamId}/invitations/{id}', () => {
  it('revokes a pending invitation once; the token stops working', async () => {
    const invitation = await invite(fx.admin, fx.teamId)
    expect((await fx.admin.delete(`/api/teams/${fx.teamId}/invitations/${invitation.id}`)).status).toBe(204)
    expect((await fx.admin.delete(`/api/teams/${fx.teamId}/invitations/${invitation.id}`)).status).toBe(404)
    expect((await new Client(app).get(`/api/invitations/${invitation.token}`)).status).toBe(404)
    const invitee = await signUp(app, { email: invitation.email })
    expect((await invitee.post(`/api/invitations/${invitation.token}/accept`)).status).toBe(404)
  })

  it('answers 404 for an invitation of another team, an unknown id and a malformed id', async () => {
    const otherTeam = (await fx.outsider.get('/api/auth/me')).body.teams[0].id
    const foreign = await invite(fx.outsider, otherTeam)
    expect((await fx.owner.delete(`/api/teams/${fx.teamId}/invitations/${foreign.id}`)).status).toBe(404)
    expect((await fx.owner.delete(`/api/teams/${fx.teamId}/invitations/00000000-0000-4000-8000-000000000000`)).status).toBe(404)
    expect((await fx.owner.delete(`/api/teams/${fx.teamId}/invitations/nope`)).status).toBe(404)
    const { rows } = await app.db.query('select revoked_at from public.invitations where id = $1', [foreign.id])
    expect(rows[0].revoked_at).toBeNull()
  })
})

describe('GET /api/invitations/{token}', () => {
  it('shows the team, e-mail, role and expiry without a session', async () => {
    const invitation = await invite(fx.owner, fx.teamId, uniqueEmail('peek'), 'admin')
    const answer = await new Client(app).get(`/api/invitations/${invitation.token}`)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ team_name: 'Role Team', email: invitation.email, role: 'admin', expires_at: invitation.expires_at })
  })

  it('answers 404 for an unknown, malformed or expired token', async () => {
    const anonymous = new Client(app)
    expect((await anonymous.get(`/api/invitations/${'a'.repeat(43)}`)).status).toBe(404)
    expect((await anonymous.get('/api/invitations/short')).status).toBe(404)
    const invitation = await invite(fx.owner, fx.teamId)
    await app.db.query(`update public.invitations set expires_at = now() - interval '1 second' where id = $1`, [invitation.id])
    const answer = await anonymous.get(`/api/invitations/${invitation.token}`)
    expect(answer.status).toBe(404)
    expect(answer.body.error).toMatch(/expired/)
  })
})

describe('POST /api/invitations/{token}/accept', () => {
  it('adds the invited user with the invited role, makes the team current and uses the token up', async () => {
    const invitation = await invite(fx.admin, fx.teamId, uniqueEmail('Joiner'), 'admin')
    const invitee = await signUp(app, { email: invitation.email.toUpperCase(), name: 'Jo Iner' })
    const answer = await invitee.post(`/api/invitations/${invitation.token}/accept`)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ team_id: fx.teamId, role: 'admin' })
    const me = await invitee.get('/api/auth/me')
    expect(me.body.current_team_id).toBe(fx.teamId)
    expect(me.body.teams).toEqual([{ id: fx.teamId, name: 'Role Team', role: 'admin' }])
    const { rows } = await app.db.query('select accepted_at, accepted_by from public.invitations where id = $1', [invitation.id])
    expect(rows[0].accepted_by).toBe(invitee.user!.id)
    expect(rows[0].accepted_at).not.toBeNull()
    // used: the token no longer works, for anyone
    expect((await invitee.post(`/api/invitations/${invitation.token}/accept`)).status).toBe(404)
    expect((await new Client(app).get(`/api/invitations/${invitation.token}`)).status).toBe(404)
    const members = await fx.owner.get(`/api/teams/${fx.teamId}/members`)
    expect(members.body).toContainEqual(expect.objectContaining({ user_id: invitee.user!.id, role: 'admin', name: 'Jo Iner' }))
  })

  it('answers 401 signed out and 403 for another e-mail, leaving the invitation pending', async () => {
    const invitation = await invite(fx.owner, fx.teamId)
    expect((await new Client(app).post(`/api/invitations/${invitation.token}/accept`)).status).toBe(401)
    const stranger = await signUp(app)
    const answer = await stranger.post(`/api/invitations/${invitation.token}/accept`)
    expect(answer.status).toBe(403)
    expect(answer.body.error).toContain(invitation.email)
    const { rows } = await app.db.query('select accepted_at from public.invitations where id = $1', [invitation.id])
    expect(rows[0].accepted_at).toBeNull()
    const { rows: memberships } = await app.db.query('select 1 from public.team_members where team_id = $1 and user_id = $2', [fx.teamId, stranger.user!.id])
    expect(memberships).toEqual([])
  })

  it('answers 404 for an expired, revoked, unknown or malformed token', async () => {
    const expired = await invite(fx.owner, fx.teamId)
    await app.db.query(`update public.invitations set expires_at = now() - interval '1 second' where id = $1`, [expired.id])
    const invitee = await signUp(app, { email: expired.email })
    expect((await invitee.post(`/api/invitations/${expired.token}/accept`)).status).toBe(404)
    expect((await invitee.post(`/api/invitations/${'b'.repeat(43)}/accept`)).status).toBe(404)
    expect((await invitee.post('/api/invitations/%20/accept')).status).toBe(404)
    const { rows } = await app.db.query('select count(*)::int as n from public.team_members where user_id = $1', [invitee.user!.id])
    expect(rows[0].n).toBe(0)
  })

  it('answers 409 when the invited user is already a member', async () => {
    const email = uniqueEmail('already')
    const invitation = await invite(fx.owner, fx.teamId, email)
    const user = await signUp(app, { email })
    await addMember(app, fx.teamId, user, 'member')
    const answer = await user.post(`/api/invitations/${invitation.token}/accept`)
    expect(answer.status).toBe(409)
    const { rows } = await app.db.query('select role from public.team_members where team_id = $1 and user_id = $2', [fx.teamId, user.user!.id])
    expect(rows).toEqual([{ role: 'member' }])
  })

  it('gives exactly one membership for 20 concurrent accepts of one token', async () => {
    const invitation = await invite(fx.owner, fx.teamId)
    const invitee = await signUp(app, { email: invitation.email })
    const answers = await Promise.all(Array.from({ length: 20 }, () => invitee.post(`/api/invitations/${invitation.token}/accept`)))
    const statuses = answers.map(answer => answer.status)
    expect(statuses.filter(status => status === 200)).toHaveLength(1)
    expect(statuses.every(status => [200, 404, 409].includes(status))).toBe(true)
    const { rows } = await app.db.query('select count(*)::int as n from public.team_members where team_id = $1 and user_id = $2', [fx.teamId, invitee.user!.id])
    expect(rows[0].n).toBe(1)
    const accepted = await app.db.query(`select count(*)::int as n from public.activity_log where table_name = 'invitations' and record_id = $1 and action = 'update'`, [invitation.id])
    expect(accepted.rows[0].n).toBe(1)
  })
})

describe('activity log of invitations', () => {
  it('records create, accept and revoke with the actor and no token', async () => {
    const owner = await signUp(app, { name: 'Auditor' })
    const teamId = (await owner.post('/api/teams', { name: 'Audit Team' })).body.id
    const accepted = await invite(owner, teamId)
    const revoked = await invite(owner, teamId)
    const invitee = await signUp(app, { email: accepted.email })
    expect((await invitee.post(`/api/invitations/${accepted.token}/accept`)).status).toBe(200)
    expect((await owner.delete(`/api/teams/${teamId}/invitations/${revoked.id}`)).status).toBe(204)

    const answer = await owner.get(`/api/teams/${teamId}/activity?table=invitations&limit=100`)
    expect(answer.status).toBe(200)
    const entries = answer.body.entries as { record_id: string, action: string, actor_id: string, source: string, new_data: Record<string, unknown>, old_data: Record<string, unknown> | null }[]
    const summary = entries.map(e => [e.record_id, e.action, e.actor_id, e.source]).sort()
    expect(summary).toEqual([
      [accepted.id, 'insert', owner.user!.id, 'web'],
      [accepted.id, 'update', invitee.user!.id, 'web'],
      [revoked.id, 'insert', owner.user!.id, 'web'],
      [revoked.id, 'update', owner.user!.id, 'web'],
    ].sort())
    const acceptEntry = entries.find(e => e.record_id === accepted.id && e.action === 'update')!
    expect(acceptEntry.new_data).toMatchObject({ accepted_by: invitee.user!.id })
    expect(entries.find(e => e.record_id === revoked.id && e.action === 'update')!.new_data.revoked_at).not.toBeNull()
    const membership = await owner.get(`/api/teams/${teamId}/activity?table=team_members&actor_id=${invitee.user!.id}`)
    expect(membership.body.entries).toEqual([expect.objectContaining({ action: 'insert', new_data: expect.objectContaining({ user_id: invitee.user!.id, role: 'member' }) })])

    const { rows } = await app.db.query(`select new_data, old_data from public.activity_log where table_name = 'invitations' and team_id = $1`, [teamId])
    const logged = JSON.stringify(rows)
    for (const invitation of [accepted, revoked]) expect(logged).not.toContain(invitation.token)
    expect(logged).not.toContain('token_hash')
    expect(logged).not.toContain('token_encrypted')
  })
})
