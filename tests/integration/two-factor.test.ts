import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { enrolTotp, signInPassword, totpCode } from '../support/factors'
import { Client, createTeam, signUp, uniqueEmail } from '../support/http'

// Second factors through the HTTP API: authenticator apps (codes computed here from the secret),
// recovery codes, the two sign-in steps and their throttle, and what never leaves the server.
let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app?.stop())

const password = 'correct horse battery'

async function account(name = 'Tess Totp') {
  const email = uniqueEmail('mfa')
  const client = await signUp(app, { email, password, name })
  return { email, client }
}

/** A copy of a client's cookie, as someone who captured it would hold. */
function capture(client: Client): Client {
  const copy = new Client(app)
  copy.cookie = client.cookie
  return copy
}

describe('authenticator apps', () => {
  it('enrol: a 160-bit secret, its otpauth URI and QR code; the first code verifies it and answers 10 recovery codes once', async () => {
    const { client, email } = await account()
    const enrolment = await client.post('/api/auth/factors/totp', { name: 'Phone' })
    expect(enrolment.status).toBe(201)
    const { id, secret, uri, qr_svg, expires_at } = enrolment.body
    expect(secret).toMatch(/^[A-Z2-7]{32}$/) // 32 base32 characters: 160 bits
    expect(uri).toMatch(/^otpauth:\/\/totp\//)
    expect(uri).toContain(`secret=${secret}`)
    expect(uri).toContain(encodeURIComponent(email))
    expect(qr_svg).toMatch(/^<svg/)
    expect(new Date(expires_at).getTime() - Date.now()).toBeGreaterThan(9 * 60_000)
    expect(new Date(expires_at).getTime() - Date.now()).toBeLessThanOrEqual(10 * 60_000)

    // not a factor until verified
    expect((await client.get('/api/auth/factors')).body.factors).toEqual([])
    const wrong = await client.post(`/api/auth/factors/totp/${id}/verify`, { code: totpCode(secret, 5) })
    expect(wrong.status).toBe(400)
    expect(wrong.body.code).toBe('invalid_code')

    const verified = await client.post(`/api/auth/factors/totp/${id}/verify`, { code: totpCode(secret) })
    expect(verified.status).toBe(200)
    expect(verified.body.factor).toMatchObject({ id, type: 'totp', name: 'Phone' })
    expect(verified.body.recovery_codes).toHaveLength(10)
    expect(new Set(verified.body.recovery_codes).size).toBe(10)

    const factors = await client.get('/api/auth/factors')
    expect(factors.status).toBe(200)
    expect(factors.body.factors).toEqual([{ id, type: 'totp', name: 'Phone', created_at: expect.any(String), last_used_at: expect.any(String) }])
    expect(factors.body.recovery_codes_remaining).toBe(10)
    // the session that verified the first factor is now at level 2
    expect((await client.get('/api/auth/me')).body.aal).toBe(2)
  })

  it('an enrolment not verified within 10 minutes is gone', async () => {
    const { client } = await account()
    const { id, secret } = (await client.post('/api/auth/factors/totp')).body
    await app.db.query(`update public.auth_factors set created_at = now() - interval '11 minutes' where id = $1`, [id])
    const late = await client.post(`/api/auth/factors/totp/${id}/verify`, { code: totpCode(secret) })
    expect(late.status).toBe(404)
    expect((await client.get('/api/auth/factors')).body.factors).toEqual([])
  })

  it('the secret is sealed at rest, and neither it nor a code or recovery code appears in any answer or log afterwards', async () => {
    const { client, email } = await account()
    const { factorId, secret, recoveryCodes, enrolment } = await enrolTotp(client)
    const enrolCode = totpCode(secret)
    const { rows } = await app.db.query('select * from public.auth_factors where id = $1', [factorId])
    expect(JSON.stringify(rows)).not.toContain(secret)
    expect(rows[0].totp_key_id).toEqual(expect.any(String))

    // a sign-in with a recovery code, then everything the account can read
    const { client: next } = await signInPassword(app, email, password)
    expect((await next.post('/api/auth/mfa/verify', { recovery_code: recoveryCodes[0] })).status).toBe(200)
    const answers = await Promise.all(['/api/auth/factors', '/api/auth/me', '/api/auth/security-log', '/api/auth/sessions', '/api/_auth/session']
      .map(path => next.get(path)))
    const { rows: log } = await app.db.query('select * from public.security_events where user_id = $1', [client.user!.id])
    expect(log.length).toBeGreaterThan(3)
    const { rows: codes } = await app.db.query('select * from public.recovery_codes where user_id = $1', [client.user!.id])
    const observed = [JSON.stringify(answers.map(answer => [answer.status, answer.body])), JSON.stringify(log), JSON.stringify(codes), app.output.join('')]
    for (const text of observed) {
      expect(text).not.toContain(secret)
      expect(text).not.toContain(enrolment.body.uri)
      for (const code of recoveryCodes) expect(text).not.toContain(code)
    }
    expect(JSON.stringify(log)).not.toContain(enrolCode)
    for (const answer of answers) expect(answer.status).toBe(200)
  })
})

describe('signing in with a second factor', () => {
  it('the password alone gives a level-1 session that reaches nothing but the second step; the code raises it under a new id', async () => {
    const { client: owner, email } = await account('Owen Owner')
    const teamId = await createTeam(owner, 'Guarded Team')
    const { secret, factorId } = await enrolTotp(owner)

    const { client, answer } = await signInPassword(app, email, password)
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ mfa_required: true, factors: [{ id: factorId, type: 'totp', name: 'Authenticator app' }] })
    const me = await client.get('/api/auth/me')
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ aal: 1, sudo_until: null, mfa_required: true, teams: [] })
    for (const path of [`/api/teams/${teamId}/members`, `/api/teams/${teamId}`, '/api/auth/factors', '/api/auth/sessions', '/api/teams']) {
      const refused = await client.get(path)
      expect(refused.status, path).toBe(401)
      expect(refused.body.code, path).toBe('mfa_required')
    }
    const created = await client.post(`/api/teams/${teamId}/api-keys`, { name: 'Level one' })
    expect(created.status).toBe(401)
    expect(created.body.code).toBe('mfa_required')
    const { rows: keys } = await app.db.query('select 1 from public.api_keys where team_id = $1', [teamId])
    expect(keys).toHaveLength(0)

    const levelOne = capture(client)
    const verified = await client.post('/api/auth/mfa/verify', { factor_id: factorId, code: totpCode(secret, 1) })
    expect(verified.status).toBe(200)
    expect(verified.body.user).toMatchObject({ id: owner.user!.id, email })
    expect(client.cookie).not.toBe(levelOne.cookie)
    const raised = await client.get('/api/auth/me')
    expect(raised.body).toMatchObject({ aal: 2, mfa_required: false, current_team_id: teamId })
    expect(new Date(raised.body.sudo_until).getTime()).toBeGreaterThan(Date.now())
    expect((await client.get(`/api/teams/${teamId}/members`)).status).toBe(200)
    // the level-1 session id is worth nothing now
    expect((await levelOne.get('/api/auth/me')).status).toBe(401)
    expect((await levelOne.post('/api/auth/mfa/verify', { factor_id: factorId, code: totpCode(secret, 1) })).status).toBe(401)
  })

  it('a code works once, even inside its window', async () => {
    const { client: owner, email } = await account()
    const { secret, factorId } = await enrolTotp(owner)
    // the enrolment code counts as used
    const first = await signInPassword(app, email, password)
    const replayEnrolment = await first.client.post('/api/auth/mfa/verify', { factor_id: factorId, code: totpCode(secret) })
    expect(replayEnrolment.status).toBe(400)
    expect(replayEnrolment.body.code).toBe('invalid_code')
    const code = totpCode(secret, 1)
    expect((await first.client.post('/api/auth/mfa/verify', { factor_id: factorId, code })).status).toBe(200)

    const second = await signInPassword(app, email, password)
    const replay = await second.client.post('/api/auth/mfa/verify', { factor_id: factorId, code })
    expect(replay.status).toBe(400)
    expect(replay.body.code).toBe('invalid_code')
    expect((await second.client.get('/api/auth/me')).body.aal).toBe(1)
  })

  it('five failed attempts in five minutes: then 429 with Retry-After, even for the right code', async () => {
    const { client: owner, email } = await account()
    const { secret, factorId } = await enrolTotp(owner)
    const { client } = await signInPassword(app, email, password)
    const wrong = totpCode(secret, 7) // a real code, of another time
    for (let attempt = 1; attempt <= 5; attempt++) {
      const answer = await client.post('/api/auth/mfa/verify', { factor_id: factorId, code: wrong })
      expect(answer.status, `attempt ${attempt}`).toBe(400)
      expect(answer.body.code).toBe('invalid_code')
    }
    const throttled = await client.post('/api/auth/mfa/verify', { factor_id: factorId, code: totpCode(secret, 1) })
    expect(throttled.status).toBe(429)
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(Number(throttled.headers.get('retry-after'))).toBeLessThanOrEqual(300)
    expect((await client.get('/api/auth/me')).body.aal).toBe(1)
    // the throttle is the account's: another sign-in of it is refused too
    const other = await signInPassword(app, email, password)
    expect((await other.client.post('/api/auth/mfa/verify', { factor_id: factorId, code: totpCode(secret, 1) })).status).toBe(429)
    const { rows } = await app.db.query(`select count(*)::int as n from public.security_events where user_id = $1 and event = 'sign_in_failed' and method = 'totp'`, [owner.user!.id])
    expect(rows[0].n).toBe(5)
  })

  it('a recovery code signs in once; a new set replaces the old one', async () => {
    const { client: owner, email } = await account()
    const { recoveryCodes } = await enrolTotp(owner)
    const first = await signInPassword(app, email, password)
    const used = await first.client.post('/api/auth/mfa/verify', { recovery_code: recoveryCodes[3]!.toUpperCase() })
    expect(used.status).toBe(200)
    expect((await first.client.get('/api/auth/factors')).body.recovery_codes_remaining).toBe(9)

    const second = await signInPassword(app, email, password)
    const again = await second.client.post('/api/auth/mfa/verify', { recovery_code: recoveryCodes[3] })
    expect(again.status).toBe(400)
    expect(again.body.code).toBe('invalid_code')

    const renewed = await first.client.post('/api/auth/recovery-codes')
    expect(renewed.status).toBe(200)
    expect(renewed.body.recovery_codes).toHaveLength(10)
    expect((await second.client.post('/api/auth/mfa/verify', { recovery_code: recoveryCodes[4] })).status).toBe(400)
    expect((await second.client.post('/api/auth/mfa/verify', { recovery_code: renewed.body.recovery_codes[0] })).status).toBe(200)
    const { rows } = await app.db.query(`select event, method from public.security_events where user_id = $1 order by id`, [owner.user!.id])
    expect(rows).toContainEqual({ event: 'recovery_code_used', method: 'recovery_code' })
    expect(rows.filter(row => row.event === 'recovery_codes_created')).toHaveLength(2)
  })

  it('a wrong password is 401 and logged as a failed sign-in; an account without factors signs in at level 1 with everything open', async () => {
    const { client: owner, email } = await account()
    const wrong = await signInPassword(app, email, 'not the password')
    expect(wrong.answer.status).toBe(401)
    const { client, answer } = await signInPassword(app, email, password)
    expect(answer.body.user.id).toBe(owner.user!.id)
    const me = await client.get('/api/auth/me')
    expect(me.body).toMatchObject({ aal: 1, mfa_required: false })
    expect(new Date(me.body.sudo_until).getTime()).toBeGreaterThan(Date.now())
    const log = await client.get('/api/auth/security-log')
    expect(log.body.entries.map((entry: { event: string, method: string }) => [entry.event, entry.method])).toEqual([['sign_in', 'password'], ['sign_in_failed', 'password']])
  })
})

describe('factors', () => {
  it('another account\'s factor is not found, whatever the route', async () => {
    const { client: alice } = await account('Alice')
    const { client: bob, email: bobEmail } = await account('Bob')
    const { factorId: alicesFactor, secret } = await enrolTotp(alice)
    await enrolTotp(bob)
    expect((await bob.patch(`/api/auth/factors/${alicesFactor}`, { name: 'Mine now' })).status).toBe(404)
    expect((await bob.delete(`/api/auth/factors/${alicesFactor}`)).status).toBe(404)
    const { client } = await signInPassword(app, bobEmail, password)
    expect((await client.post('/api/auth/mfa/verify', { factor_id: alicesFactor, code: totpCode(secret, 1) })).status).toBe(404)
    const { rows } = await app.db.query('select name from public.auth_factors where id = $1', [alicesFactor])
    expect(rows).toEqual([{ name: 'Authenticator app' }])
  })

  it('rename; remove in sudo; the last factor a team requires cannot go', async () => {
    const { client } = await account()
    const teamId = await createTeam(client, 'Strict Team')
    const first = await enrolTotp(client, 'First')
    const second = await enrolTotp(client, 'Second')
    expect(second.recoveryCodes).toEqual([]) // only the first factor makes recovery codes
    const renamed = await client.patch(`/api/auth/factors/${first.factorId}`, { name: 'Old phone' })
    expect(renamed.status).toBe(200)
    expect(renamed.body.factor.name).toBe('Old phone')
    expect((await client.patch(`/api/auth/factors/${first.factorId}`, { name: '' })).status).toBe(400)

    await app.db.query(`update public.teams set require_two_factor = 'everyone' where id = $1`, [teamId])
    expect((await client.delete(`/api/auth/factors/${first.factorId}`)).status).toBe(204)
    const last = await client.delete(`/api/auth/factors/${second.factorId}`)
    expect(last.status).toBe(409)
    expect(last.body.code).toBe('factor_required_by_team')
    await app.db.query(`update public.teams set require_two_factor = 'off' where id = $1`, [teamId])
    expect((await client.delete(`/api/auth/factors/${second.factorId}`)).status).toBe(204)
    const after = await client.get('/api/auth/factors')
    expect(after.body).toEqual({ factors: [], recovery_codes_remaining: 0 })
    const log = (await client.get('/api/auth/security-log?limit=2')).body
    expect(log.entries.map((entry: { event: string }) => entry.event)).toEqual(['factor_removed', 'factor_removed'])
    expect(log.next_cursor).toEqual(expect.any(String))
    const older = (await client.get(`/api/auth/security-log?limit=2&cursor=${log.next_cursor}`)).body
    expect(Number(older.entries[0].id)).toBeLessThan(Number(log.entries[1].id))
    expect((await client.get('/api/auth/security-log?limit=0')).status).toBe(400)
  })

  it('adding the first factor ends the account\'s other sessions', async () => {
    const { client, email } = await account()
    const { client: laptop } = await signInPassword(app, email, password)
    expect((await laptop.get('/api/auth/me')).status).toBe(200)
    await enrolTotp(client)
    expect((await laptop.get('/api/auth/me')).status).toBe(401)
    expect((await client.get('/api/auth/me')).status).toBe(200)
  })
})

describe('re-authentication before powerful actions', () => {
  async function closeSudo(client: Client) {
    // as if the window had run out: the session's own row says until when it is open
    const sessions = (await client.get('/api/auth/sessions')).body as { id: string, current: boolean }[]
    await app.db.query(`update public.user_sessions set sudo_until = now() - interval '1 second' where id = $1`, [sessions.find(session => session.current)!.id])
  }

  it('without a live window each powerful action is 403 reauth_required and changes nothing; the password reopens it', async () => {
    const { client: owner, email } = await account('Polly Powerful')
    const teamId = await createTeam(owner, 'Sudo Team')
    const key = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Existing' })).body
    const { client: member } = await account('Mo Member')
    await app.db.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'member')`, [teamId, member.user!.id])
    const { client: other } = await signInPassword(app, email, password)
    expect((await other.get('/api/auth/me')).status).toBe(200)
    await closeSudo(owner)
    expect((await owner.get('/api/auth/me')).body.sudo_until).toBeNull()

    const attempts = [
      () => owner.post(`/api/teams/${teamId}/api-keys`, { name: 'New' }),
      () => owner.post(`/api/teams/${teamId}/api-keys/${key.id}/roll`),
      () => owner.put(`/api/teams/${teamId}/api-keys/${key.id}`, { name: 'Renamed' }),
      () => owner.patch(`/api/teams/${teamId}/members/${member.user!.id}`, { role: 'admin' }),
      () => owner.delete(`/api/teams/${teamId}/members/${member.user!.id}`),
      () => owner.patch(`/api/teams/${teamId}`, { webhook_url: 'https://hooks.example.com/in' }),
      () => owner.post('/api/auth/sessions/revoke-others'),
    ]
    for (const attempt of attempts) {
      const answer = await attempt()
      expect(answer.status, attempt.toString()).toBe(403)
      expect(answer.body).toEqual({ error: expect.any(String), code: 'reauth_required', methods: ['password'] })
    }
    // the permission comes first: a member is refused for their role, not for sudo
    expect((await member.patch(`/api/teams/${teamId}/members/${owner.user!.id}`, { role: 'member' })).body.code).not.toBe('reauth_required')
    // other changes of the team need no sudo
    expect((await owner.patch(`/api/teams/${teamId}`, { name: 'Renamed Team' })).status).toBe(200)
    const { rows } = await app.db.query(`select (select count(*)::int from public.api_keys where team_id = $1) as keys,
      (select role from public.team_members where team_id = $1 and user_id = $2) as role, (select webhook_url from public.teams where id = $1) as webhook_url`, [teamId, member.user!.id])
    expect(rows[0]).toEqual({ keys: 1, role: 'member', webhook_url: null })
    expect((await other.get('/api/auth/me')).status).toBe(200)

    expect((await owner.post('/api/auth/reauth', { password: 'wrong password' })).status).toBe(401)
    const reauth = await owner.post('/api/auth/reauth', { password })
    expect(reauth.status).toBe(200)
    const until = new Date(reauth.body.sudo_until).getTime()
    expect(until - Date.now()).toBeGreaterThan(800_000)
    expect(until - Date.now()).toBeLessThanOrEqual(900_000)
    expect((await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'New' })).status).toBe(201)
    expect((await owner.patch(`/api/teams/${teamId}/members/${member.user!.id}`, { role: 'admin' })).status).toBe(200)
    expect((await owner.post('/api/auth/sessions/revoke-others')).body).toEqual({ ended: 1 })
    expect((await other.get('/api/auth/me')).status).toBe(401)
    const log = (await owner.get('/api/auth/security-log')).body.entries
    expect(log.slice(0, 2).map((entry: { event: string, method: string | null }) => [entry.event, entry.method])).toEqual([['session_ended', null], ['reauth', 'password']])
  })

  it('an account with a factor confirms with it, not the password; adding a second factor or new recovery codes needs the window', async () => {
    const { client } = await account()
    const { factorId, secret } = await enrolTotp(client)
    await closeSudo(client)
    const refused = await client.post('/api/auth/recovery-codes')
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ code: 'reauth_required', methods: ['totp'] })
    expect((await client.post('/api/auth/factors/totp')).body.code).toBe('reauth_required')
    expect((await client.post('/api/auth/factors/passkey/options')).body.code).toBe('reauth_required')
    expect((await client.delete(`/api/auth/factors/${factorId}`)).body.code).toBe('reauth_required')

    const byPassword = await client.post('/api/auth/reauth', { password })
    expect(byPassword.status).toBe(400)
    expect(byPassword.body.code).toBe('factor_required')
    const wrongCode = await client.post('/api/auth/reauth', { factor_id: factorId, code: totpCode(secret, 6) })
    expect(wrongCode.status).toBe(400)
    expect(wrongCode.body.code).toBe('invalid_code')
    expect((await client.post('/api/auth/reauth', { factor_id: factorId, code: totpCode(secret, 1) })).status).toBe(200)
    expect((await client.post('/api/auth/recovery-codes')).status).toBe(200)
  })
})

describe('sessions', () => {
  it('lists the account\'s sessions with where they came from; ends one; ends the others', async () => {
    const { client, email } = await account()
    const { client: phone } = await signInPassword(app, email, password)
    const { client: tablet } = await signInPassword(app, email, password)
    const list = await client.get('/api/auth/sessions', { 'user-agent': 'Laptop Browser/1.0' })
    expect(list.status).toBe(200)
    expect(list.body).toHaveLength(3)
    const mine = list.body.find((session: { current: boolean }) => session.current)
    expect(list.body.filter((session: { current: boolean }) => session.current)).toHaveLength(1)
    for (const session of list.body) {
      expect(session).toEqual({ id: expect.any(String), current: expect.any(Boolean), aal: 1, created_at: expect.any(String), last_seen_at: expect.any(String), ip: expect.any(String), user_agent: expect.any(String) })
    }
    const phoneId = (await phone.get('/api/auth/sessions')).body.find((session: { current: boolean }) => session.current).id
    expect(phoneId).not.toBe(mine.id)

    // another account's session is not found
    const { client: stranger } = await account()
    expect((await stranger.delete(`/api/auth/sessions/${phoneId}`)).status).toBe(404)
    expect((await phone.get('/api/auth/me')).status).toBe(200)

    expect((await client.delete(`/api/auth/sessions/${phoneId}`)).status).toBe(204)
    expect((await phone.get('/api/auth/me')).status).toBe(401)
    expect((await client.delete(`/api/auth/sessions/${phoneId}`)).status).toBe(404)

    expect((await client.post('/api/auth/sessions/revoke-others')).body).toEqual({ ended: 1 })
    expect((await tablet.get('/api/auth/me')).status).toBe(401)
    const after = await client.get('/api/auth/sessions')
    expect(after.body.map((session: { id: string }) => session.id)).toEqual([mine.id])
  })

  it('last_seen_at is written at most once a minute', async () => {
    const { client } = await account()
    const sessionId = (await client.get('/api/auth/sessions')).body[0].id
    await app.db.query(`update public.user_sessions set last_seen_at = now() - interval '30 seconds' where id = $1`, [sessionId])
    const before = (await app.db.query('select last_seen_at from public.user_sessions where id = $1', [sessionId])).rows[0].last_seen_at
    await client.get('/api/auth/me')
    const unchanged = (await app.db.query('select last_seen_at from public.user_sessions where id = $1', [sessionId])).rows[0].last_seen_at
    expect(unchanged).toEqual(before)
    await app.db.query(`update public.user_sessions set last_seen_at = now() - interval '61 seconds' where id = $1`, [sessionId])
    await client.get('/api/auth/me')
    const seen = (await app.db.query('select last_seen_at from public.user_sessions where id = $1', [sessionId])).rows[0].last_seen_at
    expect(Date.now() - new Date(seen).getTime()).toBeLessThan(30_000)
  })
})
