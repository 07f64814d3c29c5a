import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, signUp, uniqueEmail } from '../support/http'

let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app?.stop())

describe('POST /api/auth/signup', () => {
  it('creates the account and a session', async () => {
    const client = new Client(app)
    const email = uniqueEmail('Sign')
    const answer = await client.post('/api/auth/signup', { email, password: 'password-1', name: '  Sue  ' })
    expect(answer.status).toBe(201)
    expect(answer.body.user).toMatchObject({ email: email.toLowerCase(), name: 'Sue' })
    expect(client.cookie).not.toBe('')
    const me = await client.get('/api/auth/me')
    expect(me.body).toEqual({ user: answer.body.user, teams: [], current_team_id: null, aal: 1, sudo_until: expect.any(String), mfa_required: false })
    const { rows } = await app.db.query('select email, name from public.profiles where id = $1', [answer.body.user.id])
    expect(rows).toEqual([{ email: email.toLowerCase(), name: 'Sue' }])
  })

  it('answers 409 for an e-mail that is taken, in any case', async () => {
    const email = uniqueEmail('taken')
    await signUp(app, { email })
    const answer = await new Client(app).post('/api/auth/signup', { email: email.toUpperCase(), password: 'password-1', name: 'Again' })
    expect(answer.status).toBe(409)
    expect(answer.body.error).toMatch(/already exists/)
  })

  it.each([
    [{ password: 'password-1', name: 'X' }, /^email:/],
    [{ email: 'not-an-email', password: 'password-1', name: 'X' }, /^email:/],
    [{ email: 'a@b.co', password: 'short', name: 'X' }, /^password: .*at least 8/],
    [{ email: 'a@b.co', password: 'p'.repeat(129), name: 'X' }, /^password: .*at most 128/],
    [{ email: 'a@b.co', password: 'password-1', name: '' }, /^name:/],
    [{ email: 'a@b.co', password: 'password-1', name: 'n'.repeat(101) }, /^name:/],
    [{ email: 42, password: 'password-1', name: 'X' }, /^email:/],
  ])('answers 400 naming the field for %j', async (body, message) => {
    const answer = await new Client(app).post('/api/auth/signup', body)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
  })

  it('answers 400 for malformed JSON and writes nothing', async () => {
    const before = await app.db.query('select count(*)::int as n from public.profiles')
    const answer = await new Client(app).post('/api/auth/signup', '{"email": ')
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual({ error: 'The request body is not valid JSON', code: 'bad_request' })
    const after = await app.db.query('select count(*)::int as n from public.profiles')
    expect(after.rows[0].n).toBe(before.rows[0].n)
  })
})

it('answers 413 for a body over 1 MiB', async () => {
  const answer = await new Client(app).post('/api/auth/signup', { email: 'big@example.com', password: 'password-1', name: 'x'.repeat(1_100_000) })
  expect(answer.status).toBe(413)
  expect(answer.body.error).toMatch(/larger than/)
})

describe('POST /api/auth/login', () => {
  it('signs in with the right password and refuses a wrong one', async () => {
    const email = uniqueEmail('login')
    await signUp(app, { email, password: 'right-password' })
    const client = new Client(app)
    expect((await client.post('/api/auth/login', { email, password: 'wrong-password' })).status).toBe(401)
    const answer = await client.post('/api/auth/login', { email: email.toUpperCase(), password: 'right-password' })
    expect(answer.status).toBe(200)
    expect(answer.body.user.email).toBe(email)
    expect((await client.get('/api/auth/me')).status).toBe(200)
  })

  it('answers 401 for an unknown e-mail', async () => {
    const answer = await new Client(app).post('/api/auth/login', { email: uniqueEmail('nobody'), password: 'whatever-1' })
    expect(answer.status).toBe(401)
    expect(answer.body.error).toBe('Wrong e-mail or password')
  })

  it('answers 429 with Retry-After after 10 failures for one e-mail, even with the right password', async () => {
    const email = uniqueEmail('brute')
    await signUp(app, { email, password: 'right-password' })
    const client = new Client(app)
    for (let i = 0; i < 10; i++) {
      expect((await client.post('/api/auth/login', { email, password: `wrong-${i}-pass` })).status).toBe(401)
    }
    const answer = await client.post('/api/auth/login', { email, password: 'right-password' })
    expect(answer.status).toBe(429)
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(Number(answer.headers.get('retry-after'))).toBeLessThanOrEqual(15 * 60)
    // another e-mail is not affected
    const other = uniqueEmail('other')
    await signUp(app, { email: other, password: 'right-password' })
    expect((await client.post('/api/auth/login', { email: other, password: 'right-password' })).status).toBe(200)
  })
})

describe('sessions', () => {
  it('GET /api/auth/me is 401 when signed out', async () => {
    const answer = await new Client(app).get('/api/auth/me')
    expect(answer.status).toBe(401)
    expect(answer.body.error).toBeTruthy()
  })

  it('POST /api/auth/logout answers 204 and ends the session', async () => {
    const client = await signUp(app)
    const answer = await client.post('/api/auth/logout')
    expect(answer.status).toBe(204)
    expect((await client.get('/api/auth/me')).status).toBe(401)
  })

  it('refuses a forged session cookie', async () => {
    const client = new Client(app)
    client.cookie = 'nuxt-session=Fe26.2**forged**cookie'
    expect((await client.get('/api/auth/me')).status).toBe(401)
  })

  it('answers 403 to a state-changing request from another site', async () => {
    const client = await signUp(app)
    const answer = await client.post('/api/teams', { name: 'Evil' }, { origin: 'https://evil.example' })
    expect(answer.status).toBe(403)
    const { rows } = await app.db.query('select count(*)::int as n from public.teams where name = $1', ['Evil'])
    expect(rows[0].n).toBe(0)
    expect((await client.post('/api/teams', { name: 'Same site' }, { origin: app.url })).status).toBe(201)
  })
})
