import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { SoftwarePasskey } from '../support/authenticator'
import { enrolTotp, signInPassword } from '../support/factors'
import { Client, createTeam, signUp, uniqueEmail } from '../support/http'

// Passkeys at the HTTP level, with a software authenticator (an ES256 key of node:crypto):
// registration, the passwordless sign-in, the second step and sudo with a passkey, and the
// refusals (user verification off, a used or foreign challenge, another origin or RP ID, a counter
// gone backwards).
let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app?.stop())

const password = 'correct horse battery'

async function registerPasskey(client: Client, name?: string) {
  const passkey = new SoftwarePasskey(app.url)
  const options = await client.post('/api/auth/factors/passkey/options')
  expect(options.status).toBe(200)
  const answer = await client.post('/api/auth/factors/passkey', { response: passkey.register(options.body), ...(name ? { name } : {}) })
  expect(answer.status, JSON.stringify(answer.body)).toBe(201)
  return { passkey, answer, options: options.body }
}

/** Passwordless: the options call sets a short-lived cookie that the login call must bring back. */
async function passwordless(passkey: SoftwarePasskey, tweak: Parameters<SoftwarePasskey['assert']>[2] = {}) {
  const client = new Client(app)
  const options = await client.post('/api/auth/passkey/options')
  expect(options.status).toBe(200)
  const cookie = options.headers.getSetCookie().find(line => line.startsWith('tws-webauthn='))!.split(';')[0]!
  const response = passkey.assert(options.body, null, tweak)
  client.cookie = cookie
  const answer = await client.post('/api/auth/passkey/login', { response })
  return { client, answer, options: options.body, response, cookie }
}

describe('passkeys', () => {
  it('registration: options with user verification required and resident key preferred; the first passkey raises the session and makes recovery codes', async () => {
    const email = uniqueEmail('passkey')
    const client = await signUp(app, { email, password, name: 'Pat Passkey' })
    const { passkey, answer, options } = await registerPasskey(client, 'Laptop')
    expect(options).toMatchObject({
      rp: { id: '127.0.0.1' }, user: { name: email, displayName: 'Pat Passkey' },
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' }, excludeCredentials: [],
    })
    expect(answer.body.factor).toMatchObject({ type: 'passkey', name: 'Laptop' })
    expect(answer.body.recovery_codes).toHaveLength(10)
    expect((await client.get('/api/auth/me')).body.aal).toBe(2)

    // a second one, in sudo: the first is excluded
    const second = await client.post('/api/auth/factors/passkey/options')
    expect(second.body.excludeCredentials).toEqual([{ id: passkey.id, type: 'public-key', transports: ['internal'] }])
    // the same credential again is refused
    const again = await client.post('/api/auth/factors/passkey', { response: passkey.register(second.body) })
    expect(again.status).toBe(409)
    const { rows } = await app.db.query('select credential_id, sign_count from public.auth_factors where user_id = $1', [client.user!.id])
    expect(rows.map(row => [row.credential_id, Number(row.sign_count)])).toEqual([[passkey.id, 0]])
  })

  it('a registration without user verification, from another origin or for a challenge it was not given is refused', async () => {
    const client = await signUp(app)
    for (const tweak of [{ userVerified: false }, { origin: 'https://evil.example' }, { rpId: 'evil.example' }, { challenge: 'bm90LXRoZS1jaGFsbGVuZ2U' }]) {
      const passkey = new SoftwarePasskey(app.url)
      const options = (await client.post('/api/auth/factors/passkey/options')).body
      const answer = await client.post('/api/auth/factors/passkey', { response: passkey.register(options, tweak) })
      expect(answer.status, JSON.stringify(tweak)).toBe(400)
      expect(answer.body.code).toBe('invalid_passkey')
    }
    // a challenge issued to another session is not this session's
    const other = await signUp(app)
    const passkey = new SoftwarePasskey(app.url)
    const foreign = (await other.post('/api/auth/factors/passkey/options')).body
    expect((await client.post('/api/auth/factors/passkey', { response: passkey.register(foreign) })).status).toBe(400)
    expect((await client.get('/api/auth/factors')).body.factors).toEqual([])
  })

  it('passwordless sign-in at level 2; a used challenge, another origin or RP ID, no user verification or a counter gone back is 401', async () => {
    const email = uniqueEmail('passwordless')
    const owner = await signUp(app, { email, password })
    const teamId = await createTeam(owner, 'Passkey Team')
    const { passkey } = await registerPasskey(owner)

    const { client, answer, response, cookie } = await passwordless(passkey)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.user).toMatchObject({ id: owner.user!.id, email })
    const me = await client.get('/api/auth/me')
    expect(me.body).toMatchObject({ aal: 2, current_team_id: teamId })
    expect((await client.get(`/api/teams/${teamId}/members`)).status).toBe(200)

    // the same response again: its challenge was used
    const replay = new Client(app)
    replay.cookie = cookie
    expect((await replay.post('/api/auth/passkey/login', { response })).status).toBe(401)

    for (const tweak of [{ origin: 'https://evil.example' }, { rpId: 'evil.example' }, { userVerified: false }]) {
      const refused = await passwordless(passkey, tweak)
      expect(refused.answer.status, JSON.stringify(tweak)).toBe(401)
      expect(refused.answer.body.code).toBe('invalid_passkey')
    }
    // the counter stands at 1 (the one accepted sign-in): an assertion counting 1 again is a clone's
    const cloned = await passwordless(passkey, { counter: 1 })
    expect(cloned.answer.status).toBe(401)
    // without the options call's cookie the challenge is not this browser's
    const options = (await new Client(app).post('/api/auth/passkey/options')).body
    expect((await new Client(app).post('/api/auth/passkey/login', { response: passkey.assert(options, null) })).status).toBe(401)

    // five refusals counted against the account (the replay, the three tweaks, the clone): even a good assertion waits now
    const throttled = await passwordless(passkey)
    expect(throttled.answer.status).toBe(429)
    expect(Number(throttled.answer.headers.get('retry-after'))).toBeGreaterThan(0)
    const { rows } = await app.db.query(`select event, method from public.security_events where user_id = $1 and method = 'passkey' order by id`, [owner.user!.id])
    expect(rows.filter(row => row.event === 'sign_in')).toHaveLength(1)
    expect(rows.filter(row => row.event === 'sign_in_failed')).toHaveLength(5)
  })

  it('a passkey as the second step after the password, and to reopen sudo', async () => {
    const email = uniqueEmail('second-step')
    const owner = await signUp(app, { email, password })
    await enrolTotp(owner)
    const { passkey, answer } = await registerPasskey(owner, 'Phone')
    const factorId = answer.body.factor.id
    expect(answer.body.recovery_codes).toBeUndefined()

    const { client, answer: first } = await signInPassword(app, email, password)
    expect(first.body.factors.map((factor: { type: string }) => factor.type)).toEqual(['totp', 'passkey'])
    const options = await client.post('/api/auth/mfa/passkey/options')
    expect(options.body.allowCredentials).toEqual([{ id: passkey.id, type: 'public-key', transports: ['internal'] }])
    const verified = await client.post('/api/auth/mfa/verify', { factor_id: factorId, response: passkey.assert(options.body, owner.user!.id) })
    expect(verified.status, JSON.stringify(verified.body)).toBe(200)
    expect((await client.get('/api/auth/me')).body.aal).toBe(2)

    const sessions = (await client.get('/api/auth/sessions')).body as { id: string, current: boolean }[]
    await app.db.query(`update public.user_sessions set sudo_until = null where id = $1`, [sessions.find(session => session.current)!.id])
    const refused = await client.post('/api/auth/recovery-codes')
    expect(refused.body).toMatchObject({ code: 'reauth_required', methods: ['totp', 'passkey'] })
    const reauthOptions = (await client.post('/api/auth/reauth/passkey/options')).body
    // a challenge of the sign-in step does not serve sudo, and the reverse
    const wrongPurpose = await client.post('/api/auth/reauth', { factor_id: factorId, response: passkey.assert(options.body, owner.user!.id) })
    expect(wrongPurpose.status).toBe(401)
    const reauth = await client.post('/api/auth/reauth', { factor_id: factorId, response: passkey.assert(reauthOptions, owner.user!.id) })
    expect(reauth.status, JSON.stringify(reauth.body)).toBe(200)
    expect((await client.post('/api/auth/recovery-codes')).status).toBe(200)
  })

  it('the second step takes whichever of the account\'s passkeys the browser picked, never another account\'s', async () => {
    const email = uniqueEmail('two-passkeys')
    const owner = await signUp(app, { email, password })
    const { answer: phone } = await registerPasskey(owner, 'Phone')
    const { passkey: laptop } = await registerPasskey(owner, 'Laptop')
    const stranger = await signUp(app, { email: uniqueEmail('stranger'), password })
    const { passkey: strangers } = await registerPasskey(stranger, 'Theirs')

    const { client } = await signInPassword(app, email, password)
    // the page names the first passkey; the browser answers with the second
    const options = await client.post('/api/auth/mfa/passkey/options')
    const foreign = await client.post('/api/auth/mfa/verify', { factor_id: phone.body.factor.id, response: strangers.assert(options.body, stranger.user!.id) })
    expect(foreign.status).toBe(401)
    expect((await client.get('/api/auth/me')).body.aal).toBe(1)
    const retry = await client.post('/api/auth/mfa/passkey/options')
    const verified = await client.post('/api/auth/mfa/verify', { factor_id: phone.body.factor.id, response: laptop.assert(retry.body, owner.user!.id) })
    expect(verified.status, JSON.stringify(verified.body)).toBe(200)
    expect((await client.get('/api/auth/me')).body.aal).toBe(2)
  })
})
