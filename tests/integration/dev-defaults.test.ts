import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadMigrationFiles } from '../../scripts/load-migrations'
import { logLines, startApp, type TestApp } from '../support/app'
import { Client, teamWithRoles } from '../support/http'

// What `npm run dev` allows for convenience (webhooks to this machine, the demo sign-in on the
// sign-in page) a production build never does, even with the demo account seeded.
let app: TestApp
beforeAll(async () => {
  // on an empty database, as a first start is: the app applies every migration itself
  app = await startApp({ NUXT_SEED_DEMO: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '' }, { emptyDatabase: true })
})
afterAll(() => app?.stop())

describe('a first start', () => {
  it('applies every migration to an empty database, and says so', async () => {
    const migrations = loadMigrationFiles()
    const { rows } = await app.db.query<{ name: string }>('select name from public.schema_migrations order by version')
    expect(rows.map(row => row.name)).toEqual(migrations.map(migration => migration.name))
    expect(logLines(app)).toContainEqual(expect.objectContaining({ level: 'info', tag: 'db', message: expect.stringMatching(`^Applied ${migrations.length} migration\\(s\\): `), migrations: migrations.map(migration => migration.name) }))
  })
})

describe('a production build', () => {
  it('refuses webhook URLs on private addresses when WEBHOOK_ALLOW_PRIVATE_NETWORKS is not set', async () => {
    const team = await teamWithRoles(app)
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost:3000/hook']) {
      const answer = await team.owner.post(`/api/teams/${team.teamId}/webhooks/endpoints`, { url, events: ['*'] })
      expect(answer.status, url).toBe(400)
      expect(answer.body.error, url).toMatch(/^url: .*private/)
    }
    const { rows } = await app.db.query('select count(*)::int as n from public.webhook_endpoints where team_id = $1', [team.teamId])
    expect(rows[0].n).toBe(0)
  })

  it('never hints at the demo account, though it exists', async () => {
    const { rows } = await app.db.query(`select count(*)::int as n from public.profiles where email = 'demo@example.com'`)
    expect(rows[0].n).toBe(1)
    const config = await new Client(app).get('/api/config')
    expect(config.status).toBe(200)
    expect(config.body.demo_account).toBeNull()
    const page = await new Client(app).get('/login')
    expect(page.status).toBe(200)
    expect(page.body).toContain('Sign in')
    expect(page.body).not.toContain('Demo account')
  })
})
