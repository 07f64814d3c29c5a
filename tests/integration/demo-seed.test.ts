import { afterEach, describe, expect, it } from 'vitest'
import { logLines, startApp, type TestApp } from '../support/app'
import { Client } from '../support/http'

let app: TestApp | undefined
afterEach(async () => {
  await app?.stop()
  app = undefined
})

const signIn = (password: string) => new Client(app!).post('/api/auth/login', { email: 'demo@example.com', password })
const profiles = async () => (await app!.db.query('select count(*)::int as n from public.profiles')).rows[0].n as number

describe('the demo account', () => {
  it('is not seeded in production unless asked for', async () => {
    // an empty value is the setting left unset
    app = await startApp({ NODE_ENV: 'production', NUXT_SEED_DEMO: '' })
    expect(await profiles()).toBe(0)
    expect((await signIn('demo-password')).status).toBe(401)
    expect(logLines(app).filter(line => /Seeded the demo team/.test(line.message))).toEqual([])
    expect(app.output.join('')).not.toMatch(/Seeded the demo team/)
  })

  it('is seeded in production on request with a generated password printed once, never the published one', async () => {
    app = await startApp({ NODE_ENV: 'production', NUXT_SEED_DEMO: 'true' })
    expect(await profiles()).toBeGreaterThan(0)
    const printed = logLines(app).find(line => line.tag === 'db' && line.message.startsWith('Seeded the demo team'))?.message.match(/^Seeded the demo team\. Sign in as demo@example\.com with the password (\S+)$/)
    expect(printed).not.toBeNull()
    const password = printed![1]!
    expect(password).not.toBe('demo-password')
    expect(password.length).toBeGreaterThanOrEqual(16)
    expect((await signIn('demo-password')).status).toBe(401)
    expect((await new Client(app).post('/api/auth/login', { email: 'sam@example.com', password: 'demo-password' })).status).toBe(401)
    expect((await signIn(password)).status).toBe(200)
    // each demo row's history names its author, as its created_by does
    const { rows: authors } = await app.db.query(
      `select distinct l.table_name, p.name from public.activity_log l left join public.profiles p on p.id = l.actor_id
       where l.table_name in ('projects', 'tasks', 'notes') and l.action = 'insert' order by l.table_name`)
    expect(authors).toEqual([{ table_name: 'notes', name: 'Dana Demo' }, { table_name: 'projects', name: 'Dana Demo' }, { table_name: 'tasks', name: 'Dana Demo' }])
    await app.restart()
    expect(logLines(app).filter(line => /with the password/.test(line.message))).toHaveLength(1)
    expect(app.output.join('').match(/with the password/g)).toHaveLength(1)
    expect((await signIn(password)).status).toBe(200)
  })
})
