import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, signUp, uniqueEmail } from '../support/http'

let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app?.stop())

describe('login throttling under concurrency', () => {
  it('checks at most 10 of 30 concurrent wrong passwords for one e-mail; the rest answer 429', async () => {
    const email = uniqueEmail('race')
    await signUp(app, { email, password: 'right-password' })
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      new Client(app).post('/api/auth/login', { email, password: `wrong-password-${i}` })))
    const statuses = answers.map(answer => answer.status)
    expect(statuses.filter(status => status === 401)).toHaveLength(10)
    expect(statuses.filter(status => status === 429)).toHaveLength(20)
    for (const answer of answers.filter(a => a.status === 429)) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0)
    // the right password waits for the window too
    expect((await new Client(app).post('/api/auth/login', { email, password: 'right-password' })).status).toBe(429)
    const { rows } = await app.db.query('select attempts from public.login_attempts where key = $1', [email])
    expect(rows[0].attempts).toBe(31)
  })

  it('a successful sign-in ends the window: failures before it do not add up with later ones', async () => {
    const email = uniqueEmail('reset')
    await signUp(app, { email, password: 'right-password' })
    const client = new Client(app)
    for (let i = 0; i < 9; i++) expect((await client.post('/api/auth/login', { email, password: `wrong-${i}-pass` })).status).toBe(401)
    expect((await client.post('/api/auth/login', { email, password: 'right-password' })).status).toBe(200)
    for (let i = 0; i < 10; i++) expect((await client.post('/api/auth/login', { email, password: `wrong-${i}-again` })).status).toBe(401)
    expect((await client.post('/api/auth/login', { email, password: 'wrong-once-more' })).status).toBe(429)
  })
})
