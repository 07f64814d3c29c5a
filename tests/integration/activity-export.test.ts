import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { logLines, startApp, type TestApp } from '../support/app'
import { parseCsv } from '../support/csv'
import { databaseKind } from '../support/database'
import { Client, teamWithRoles, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'

let app: TestApp
let fx: TeamFixture
let keyId: string
let api: Client
beforeAll(async () => {
  app = await startApp({ ACTIVITY_PURGE_INTERVAL_MS: '300' })
  fx = await teamWithRoles(app)
  const created = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Importer' })
  keyId = created.body.id
  const key = created.body.key as string
  api = new Client(app)
  const request = api.request.bind(api)
  api.request = (method, path, body, headers = {}) => request(method, path, body, { authorization: `Bearer ${key}`, ...headers })
})
afterAll(() => app?.stop())

describe('activity entries name the key, the record and the people', () => {
  it('records which API key made a write, with its name', async () => {
    const created = await api.post('/api/v1/projects', { name: 'Key Project' })
    expect(created.status).toBe(201)
    const answer = await fx.owner.get(`/api/teams/${fx.teamId}/activity?record_id=${created.body.id}`)
    expect(answer.status).toBe(200)
    expect(answer.body.entries).toHaveLength(1)
    expect(answer.body.entries[0]).toMatchObject({
      source: 'api', api_key_id: keyId, api_key_name: 'Importer', actor_id: fx.owner.user!.id,
      table_name: 'projects', action: 'insert', record_title: 'Key Project',
    })
    const { rows } = await app.db.query('select api_key_id from public.activity_log where record_id = $1', [created.body.id])
    expect(rows).toEqual([{ api_key_id: keyId }])
    const byKey = await fx.owner.get(`/api/teams/${fx.teamId}/activity?api_key_id=${keyId}`)
    expect(byKey.body.entries.map((e: { record_id: string }) => e.record_id)).toContain(created.body.id)
  })

  it('leaves api_key_id empty for browser writes', async () => {
    await fx.admin.patch(`/api/teams/${fx.teamId}`, { name: 'Renamed by web' })
    const answer = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=teams&action=update&source=web`)
    expect(answer.body.entries[0]).toMatchObject({ api_key_id: null, api_key_name: null, actor_name: 'Adam Admin', record_title: 'Renamed by web' })
  })

  it('writes no entry when using a key only sets its last_used_at', async () => {
    const { rows } = await waitFor('last_used_at to be recorded', async () => {
      const result = await app.db.query('select last_used_at from public.api_keys where id = $1 and last_used_at is not null', [keyId])
      return result.rowCount ? result : undefined
    })
    expect(rows[0].last_used_at).toBeInstanceOf(Date)
    const updates = await app.db.query(`select count(*)::int as n from public.activity_log where table_name = 'api_keys' and action = 'update'`)
    expect(updates.rows[0].n).toBe(0)
    // a real change of a key (a revocation) is still logged
    const spare = (await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Spare' })).body
    expect((await fx.owner.patch(`/api/teams/${fx.teamId}/api-keys/${spare.id}`)).status).toBe(200)
    const entries = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=api_keys&action=update`)
    expect(entries.body.total).toBe(1)
    expect(entries.body.entries[0]).toMatchObject({ record_id: spare.id, record_title: 'Spare', old_data: { revoked_at: null } })
    expect(entries.body.entries[0].new_data).not.toHaveProperty('key_hash')
  })

  it('gives the names of the people and records the values point at', async () => {
    const { rows } = await app.db.query(
      `insert into public.projects (team_id, created_by, name) values ($1, $2, 'Named Project') returning id`,
      [fx.teamId, fx.owner.user!.id],
    )
    const task = await app.db.query(
      `insert into public.tasks (team_id, created_by, title, project_id, assignee_id) values ($1, $2, 'Named task', $3, $4) returning id`,
      [fx.teamId, fx.owner.user!.id, rows[0].id, fx.member.user!.id],
    )
    const answer = await fx.owner.get(`/api/teams/${fx.teamId}/activity?record_id=${task.rows[0].id}`)
    expect(answer.body.entries[0]).toMatchObject({ record_title: 'Named task', source: 'system' })
    expect(answer.body.names).toMatchObject({
      [rows[0].id]: 'Named Project',
      [fx.member.user!.id]: 'Mia Member',
      [fx.owner.user!.id]: 'Olive Owner',
    })
    const members = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=team_members&action=insert`)
    expect(members.body.entries.map((e: { record_title: string }) => e.record_title)).toContain('Olive Owner')
  })

  it('filters by a time range', async () => {
    const all = (await fx.owner.get(`/api/teams/${fx.teamId}/activity?limit=100`)).body
    const newest = all.entries[0].created_at as string
    const future = new Date(Date.now() + 3_600_000).toISOString()
    expect((await fx.owner.get(`/api/teams/${fx.teamId}/activity?from=${future}`)).body.total).toBe(0)
    expect((await fx.owner.get(`/api/teams/${fx.teamId}/activity?to=${future}`)).body.total).toBe(all.total)
    const onlyNewest = await fx.owner.get(`/api/teams/${fx.teamId}/activity?from=${encodeURIComponent(newest)}`)
    expect(onlyNewest.body.entries.every((e: { created_at: string }) => e.created_at >= newest)).toBe(true)
    expect(onlyNewest.body.total).toBeGreaterThanOrEqual(1)
    const bad = await fx.owner.get(`/api/teams/${fx.teamId}/activity?from=yesterday`)
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatch(/^from:/)
  })
})

describe('GET /api/teams/{teamId}/activity/export', () => {
  it('streams every matching entry as CSV, with fields a spreadsheet reads as text', async () => {
    const tricky = '=HYPERLINK("x"), with "quotes"\nand a line break'
    const created = await api.post('/api/v1/tasks', { title: tricky })
    expect(created.status).toBe(201)
    const total = (await fx.owner.get(`/api/teams/${fx.teamId}/activity`)).body.total
    const answer = await fetch(`${app.url}/api/teams/${fx.teamId}/activity/export?format=csv`, { headers: { cookie: fx.admin.cookie } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toMatch(/^text\/csv/)
    expect(answer.headers.get('content-disposition')).toMatch(/^attachment; filename="activity-\d{4}-\d{2}-\d{2}\.csv"$/)
    const rows = parseCsv(await answer.text())
    expect(rows[0]).toEqual(['id', 'created_at', 'actor_id', 'actor_name', 'source', 'source_ref', 'api_key_id', 'api_key_name',
      'table_name', 'record_id', 'record_title', 'action', 'new_data', 'old_data'])
    expect(rows).toHaveLength(total + 1)
    const task = rows.find(row => row[9] === created.body.id)!
    expect(task[10]).toBe(`'${tricky}`)
    expect(task[7]).toBe('Importer')
    expect(JSON.parse(task[12]!).title).toBe(tricky)
  })

  it('streams NDJSON with the same filters as the list', async () => {
    const answer = await fetch(`${app.url}/api/teams/${fx.teamId}/activity/export?format=ndjson&table=projects`, { headers: { cookie: fx.owner.cookie } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const lines = (await answer.text()).trim().split('\n').map(line => JSON.parse(line))
    const list = (await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=projects&limit=100`)).body
    expect(lines.map(line => line.id)).toEqual(list.entries.map((e: { id: string }) => e.id))
    expect(lines.every(line => line.table_name === 'projects')).toBe(true)
  })

  it('exports more entries than one batch, each once, newest first', async () => {
    const { rows } = await app.db.query(
      `insert into public.activity_log (team_id, source, table_name, record_id, action, new_data, created_at)
       select $1, 'system', 'bulk', g::text, 'insert', jsonb_build_object('name', 'row ' || g), now() - make_interval(secs => g)
       from generate_series(1, 2500) g returning id`,
      [fx.teamId],
    )
    expect(rows).toHaveLength(2500)
    const answer = await fetch(`${app.url}/api/teams/${fx.teamId}/activity/export?format=ndjson&table=bulk`, { headers: { cookie: fx.owner.cookie } })
    const lines = (await answer.text()).trim().split('\n').map(line => JSON.parse(line) as { record_id: string, created_at: string })
    expect(lines).toHaveLength(2500)
    expect(new Set(lines.map(line => line.record_id)).size).toBe(2500)
    expect(lines.map(line => Number(line.record_id))).toEqual(Array.from({ length: 2500 }, (_, i) => i + 1))
  })

  it('needs activity.view, a known format and valid filters', async () => {
    expect((await fx.member.get(`/api/teams/${fx.teamId}/activity/export?format=csv`)).status).toBe(403)
    expect((await fx.outsider.get(`/api/teams/${fx.teamId}/activity/export?format=csv`)).status).toBe(404)
    expect((await fx.anonymous.get(`/api/teams/${fx.teamId}/activity/export?format=csv`)).status).toBe(401)
    const format = await fx.owner.get(`/api/teams/${fx.teamId}/activity/export?format=xlsx`)
    expect(format.status).toBe(400)
    expect(format.body.error).toMatch(/^format:/)
    expect((await fx.owner.get(`/api/teams/${fx.teamId}/activity/export`)).status).toBe(400)
    expect((await fx.owner.get(`/api/teams/${fx.teamId}/activity/export?format=csv&to=soon`)).status).toBe(400)
  })

  it('never includes another team\'s entries', async () => {
    const outsiderTeam = (await fx.outsider.get('/api/auth/me')).body.current_team_id
    const answer = await fetch(`${app.url}/api/teams/${outsiderTeam}/activity/export?format=ndjson`, { headers: { cookie: fx.outsider.cookie } })
    const lines = (await answer.text()).trim().split('\n').map(line => JSON.parse(line))
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.every(line => line.team_id === outsiderTeam)).toBe(true)
  })
})

describe('activity retention', () => {
  const backdate = (teamId: string, days: number) => app.db.query(
    `insert into public.activity_log (team_id, source, table_name, record_id, action, created_at)
     select $1, 'system', 'old', g::text, 'insert', now() - make_interval(days => $2) from generate_series(1, 5) g`,
    [teamId, days],
  )
  const count = async (teamId: string, table: string) =>
    (await app.db.query('select count(*)::int as n from public.activity_log where team_id = $1 and table_name = $2', [teamId, table])).rows[0].n as number

  it('validates activity_retention_days and answers it on the team', async () => {
    for (const value of [0, 36501, 1.5, 'ten']) {
      const answer = await fx.owner.patch(`/api/teams/${fx.teamId}`, { activity_retention_days: value })
      expect(answer.status).toBe(400)
      expect(answer.body.error).toMatch(/^activity_retention_days:/)
    }
    expect((await fx.member.patch(`/api/teams/${fx.teamId}`, { activity_retention_days: 30 })).status).toBe(403)
    const team = await fx.owner.get(`/api/teams/${fx.teamId}`)
    expect(team.body.activity_retention_days).toBeNull()
  })

  it('deletes entries older than the team\'s retention soon after it is set, and keeps the rest', async () => {
    const otherTeam = (await fx.outsider.get('/api/auth/me')).body.current_team_id
    await backdate(fx.teamId, 40)
    await backdate(fx.teamId, 10)
    await backdate(otherTeam, 400)
    expect(await count(fx.teamId, 'old')).toBe(10)
    const answer = await fx.owner.patch(`/api/teams/${fx.teamId}`, { activity_retention_days: 30 })
    expect(answer.status).toBe(200)
    expect(answer.body.activity_retention_days).toBe(30)
    await waitFor('the 40-day-old entries to be purged', async () => await count(fx.teamId, 'old') === 5)
    const kept = await app.db.query(`select count(*)::int as n from public.activity_log where team_id = $1 and table_name = 'old' and created_at > now() - interval '11 days'`, [fx.teamId])
    expect(kept.rows[0].n).toBe(5)
    // a team without retention keeps everything
    expect(await count(otherTeam, 'old')).toBe(5)
    // the change itself is logged
    const log = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=teams&action=update`)
    expect(log.body.entries[0].new_data.activity_retention_days).toBe(30)
    // null keeps entries forever again
    expect((await fx.owner.patch(`/api/teams/${fx.teamId}`, { activity_retention_days: null })).body.activity_retention_days).toBeNull()
  })

  if (databaseKind() === 'postgres') {
    it('purges on one instance at a time: not while another holds the lock', async () => {
      await fx.owner.patch(`/api/teams/${fx.teamId}`, { activity_retention_days: 1 })
      const holder = new pg.Client({ connectionString: app.databaseUrl })
      await holder.connect()
      try {
        await holder.query(`select pg_advisory_lock(hashtext('activity_retention'))`)
        await backdate(fx.teamId, 3)
        await waitFor('the app to see the lock held', async () => logLines(app).some(line => line.tag === 'jobs' && line.job === 'activity-retention' && line.message === 'Another instance is running activity-retention; this one waits'))
        expect(await count(fx.teamId, 'old')).toBeGreaterThanOrEqual(5)
        await holder.query(`select pg_advisory_unlock(hashtext('activity_retention'))`)
        await waitFor('the purge after the lock is released', async () => await count(fx.teamId, 'old') === 0)
      }
      finally {
        await holder.end()
      }
    })
  }
})
