import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { appWithTeamForFile } from '../support/file-hooks'
import { keyClientFor, type KeyClient, type TeamFixture } from '../support/http'

// Every domain table has updated_at, set by the database, in the precision answers carry: an
// integration that polls for what changed since the last value it saw gets each change once.
let app: TestApp
let fixture: TeamFixture
let api: KeyClient
appWithTeamForFile({}, async (started) => {
  ({ app, team: fixture } = started)
  api = await keyClientFor(app, fixture, 'Sync')
})

describe('updated_at', () => {
  it('is on every domain table, set on insert and moved by every update that changes the record, whoever writes', async () => {
    for (const [table, body, column] of [['projects', { name: 'P' }, 'name'], ['tasks', { title: 'T' }, 'title'], ['notes', { title: 'N' }, 'title']] as const) {
      const created = await api.post(`/api/v1/${table}`, body)
      expect(created.status).toBe(201)
      expect(created.body.updated_at).toBe(created.body.created_at)
      // a later transaction that changes the record moves it, also a write that does not come through the API
      await app.db.query(`update public.${table} set ${column} = ${column} || ' changed' where id = $1`, [created.body.id])
      const { rows } = await app.db.query(`select updated_at > created_at as moved from public.${table} where id = $1`, [created.body.id])
      expect(rows[0].moved, table).toBe(true)
    }
    const task = await api.post('/api/v1/tasks', { title: 'Bumped' })
    const changed = await fixture.owner.patch(`/api/teams/${fixture.teamId}/records/tasks/${task.body.id}`, { title: 'Bumped again' })
    expect(changed.status).toBe(200)
    expect(Date.parse(changed.body.updated_at)).toBeGreaterThan(Date.parse(task.body.updated_at))
  })

  it('cannot be set by a client: 400 naming it, nothing written', async () => {
    const created = await api.post('/api/v1/tasks', { title: 'Stamped', updated_at: '2000-01-01T00:00:00.000Z' })
    expect(created.status).toBe(400)
    expect(created.body.error).toMatch(/^updated_at: /)
    const task = await api.post('/api/v1/tasks', { title: 'Kept' })
    const patched = await api.patch(`/api/v1/tasks/${task.body.id}`, { updated_at: '2000-01-01T00:00:00.000Z' })
    expect(patched.status).toBe(400)
    expect(patched.body.error).toMatch(/^updated_at: /)
    const { rows } = await app.db.query('select count(*)::int as n from public.tasks where title = $1', ['Stamped'])
    expect(rows[0].n).toBe(0)
  })

  it('answers the stored value exactly, so polling with the last value seen returns each change once', async () => {
    const seen = new Map<string, number>()
    let since = '1970-01-01T00:00:00.000Z'
    const poll = async () => {
      const page = await api.get(`/api/v1/tasks?updated_at=gt.${since}&order=updated_at.asc&limit=100`)
      expect(page.status).toBe(200)
      for (const row of page.body) seen.set(row.id, (seen.get(row.id) ?? 0) + 1)
      if (page.body.length) since = page.body.at(-1).updated_at
      return page.body as { id: string, title: string, updated_at: string }[]
    }
    await poll()
    seen.clear()
    const first = await api.post('/api/v1/tasks', { title: 'Poll one' })
    const second = await api.post('/api/v1/tasks', { title: 'Poll two' })
    expect((await poll()).map(row => row.title)).toEqual(['Poll one', 'Poll two'])
    // the last value seen does not return the last row again
    expect(await poll()).toEqual([])
    await api.patch(`/api/v1/tasks/${first.body.id}`, { title: 'Poll one, changed' })
    expect((await poll()).map(row => row.title)).toEqual(['Poll one, changed'])
    expect(await poll()).toEqual([])
    expect(seen.get(second.body.id)).toBe(1)
    expect(seen.get(first.body.id)).toBe(2)
    // the answer is the stored instant, to the millisecond
    const { rows } = await app.db.query('select updated_at = $2::timestamptz as same from public.tasks where id = $1', [first.body.id, since])
    expect(rows[0].same).toBe(true)
  })
})
