import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, createTeam, signUp, uniqueEmail } from '../support/http'

// A session cookie is worth something only while its server-side session exists: these tests
// replay cookies captured before sign-out, "sign out everywhere" and a password change.
let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app?.stop())

/** A second client holding a copy of `client`'s cookie, as an attacker who captured it would. */
function capture(client: Client): Client {
  const copy = new Client(app)
  copy.cookie = client.cookie
  return copy
}

async function signIn(email: string, password: string): Promise<Client> {
  const client = new Client(app)
  const answer = await client.post('/api/auth/login', { email, password })
  expect(answer.status).toBe(200)
  return client
}

async function sessionRows(userId: string): Promise<number> {
  const { rows } = await app.db.query('select count(*)::int as n from public.user_sessions where user_id = $1', [userId])
  return rows[0].n
}

describe('server-side sessions', () => {
  it('sign-out ends the session: a cookie captured before it answers 401 everywhere afterwards', async () => {
    const user = await signUp(app, { name: 'Sam Session' })
    const teamId = await createTeam(user, 'Session Team')
    const stolen = capture(user)
    expect((await stolen.get('/api/auth/me')).status).toBe(200)
    expect(await sessionRows(user.user!.id)).toBe(1)

    expect((await user.post('/api/auth/logout')).status).toBe(204)
    expect(user.cookie).toBe('')
    expect(await sessionRows(user.user!.id)).toBe(0)

    const me = await stolen.get('/api/auth/me')
    expect(me.status).toBe(401)
    expect(me.body.error).toMatch(/session has ended/)
    expect((await stolen.get(`/api/teams/${teamId}/members`)).status).toBe(401)
    expect((await stolen.patch(`/api/teams/${teamId}`, { name: 'Taken over' })).status).toBe(401)
    expect((await stolen.get('/api/_auth/session')).status).toBe(401)
    const { rows } = await app.db.query('select name from public.teams where id = $1', [teamId])
    expect(rows[0].name).toBe('Session Team')
  })

  it('clearing the session through the library route ends it too', async () => {
    const user = await signUp(app)
    const stolen = capture(user)
    expect((await user.delete('/api/_auth/session')).status).toBe(200)
    expect((await stolen.get('/api/auth/me')).status).toBe(401)
  })

  it('each sign-in is its own session; signing out of one leaves the others', async () => {
    const email = uniqueEmail('multi')
    const laptop = await signUp(app, { email, password: 'laptop-password' })
    const phone = await signIn(email, 'laptop-password')
    expect(phone.cookie).not.toBe(laptop.cookie)
    expect(await sessionRows(laptop.user!.id)).toBe(2)
    await phone.post('/api/auth/logout')
    expect((await laptop.get('/api/auth/me')).status).toBe(200)
    expect((await phone.get('/api/auth/me')).status).toBe(401)
  })

  it('"sign out everywhere" ends every session of the user, and no one else\'s', async () => {
    const email = uniqueEmail('everywhere')
    const laptop = await signUp(app, { email, password: 'everywhere-password' })
    const phone = await signIn(email, 'everywhere-password')
    const stolen = capture(phone)
    const other = await signUp(app, { name: 'Other User' })

    const answer = await laptop.post('/api/auth/logout-all')
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ ended_sessions: 2 })
    for (const client of [laptop, phone, stolen]) expect((await client.get('/api/auth/me')).status).toBe(401)
    expect((await other.get('/api/auth/me')).status).toBe(200)
    // signing in again works
    expect((await (await signIn(email, 'everywhere-password')).get('/api/auth/me')).status).toBe(200)
  })

  it('a password change ends the other sessions and keeps this one; the old password stops working', async () => {
    const email = uniqueEmail('password')
    const here = await signUp(app, { email, password: 'old-password-1' })
    const elsewhere = await signIn(email, 'old-password-1')

    const answer = await here.post('/api/auth/password', { current_password: 'old-password-1', new_password: 'new-password-2' })
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ ended_sessions: 1 })
    expect((await here.get('/api/auth/me')).status).toBe(200)
    expect((await elsewhere.get('/api/auth/me')).status).toBe(401)
    expect((await new Client(app).post('/api/auth/login', { email, password: 'old-password-1' })).status).toBe(401)
    await signIn(email, 'new-password-2')
  })

  it('a password change needs the current password and a valid new one; a refusal changes nothing', async () => {
    const email = uniqueEmail('refused')
    const here = await signUp(app, { email, password: 'kept-password' })
    const elsewhere = await signIn(email, 'kept-password')
    const wrong = await here.post('/api/auth/password', { current_password: 'not-the-password', new_password: 'new-password-3' })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toBe('current_password: is wrong')
    const short = await here.post('/api/auth/password', { current_password: 'kept-password', new_password: 'short' })
    expect(short.status).toBe(400)
    expect(short.body.error).toBe('new_password: must be at least 8 characters')
    const nul = await here.post('/api/auth/password', { current_password: 'kept-password', new_password: 'nul\u0000password' })
    expect(nul.status).toBe(400)
    expect((await elsewhere.get('/api/auth/me')).status).toBe(200)
    expect((await new Client(app).post('/api/auth/login', { email, password: 'kept-password' })).status).toBe(200)
    // signed out, there is nothing to change
    expect((await new Client(app).post('/api/auth/password', { current_password: 'kept-password', new_password: 'new-password-4' })).status).toBe(401)
  })

  it('a cookie sealed without a server-side session (from before sessions were kept) is refused', async () => {
    const user = await signUp(app)
    await app.db.query('delete from public.user_sessions where user_id = $1', [user.user!.id])
    expect((await user.get('/api/auth/me')).status).toBe(401)
  })
})
