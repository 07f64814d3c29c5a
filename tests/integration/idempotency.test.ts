import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { appWithTeamForFile } from '../support/file-hooks'
import { keyClientFor, type KeyClient, type TeamFixture } from '../support/http'

// Idempotency-Key on the public API's writes: a retried request gets the first answer again and
// writes nothing more, whatever the timing.
let app: TestApp
let fixture: TeamFixture
let api: KeyClient
appWithTeamForFile({}, async (started) => {
  ({ app, team: fixture } = started)
  api = await newKey()
})

const newKey = () => keyClientFor(app, fixture, 'Retrying')

const countTitled = async (title: string) =>
  (await app.db.query('select count(*)::int as n from public.tasks where team_id = $1 and title = $2', [fixture.teamId, title])).rows[0].n
const idem = (key: string) => ({ 'idempotency-key': key })

describe('Idempotency-Key', () => {
  it('a retried POST answers the first answer again, marked as replayed, and creates one record', async () => {
    const first = await api.post('/api/v1/tasks', { title: 'Once only' }, idem('create-once'))
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const retry = await api.post('/api/v1/tasks', { title: 'Once only' }, idem('create-once'))
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.body).toEqual(first.body)
    expect(await countTitled('Once only')).toBe(1)
    // a bulk create too
    const bulk = [{ title: 'Bulk once' }, { title: 'Bulk once' }]
    expect((await api.post('/api/v1/tasks', bulk, idem('bulk-once'))).status).toBe(201)
    expect((await api.post('/api/v1/tasks', bulk, idem('bulk-once'))).headers.get('idempotent-replayed')).toBe('true')
    expect(await countTitled('Bulk once')).toBe(2)
  })

  it('replays PATCH and DELETE, logging one change each', async () => {
    const task = (await api.post('/api/v1/tasks', { title: 'To change' })).body
    const patch = () => api.patch(`/api/v1/tasks/${task.id}`, { priority: 1 }, idem(`patch-${task.id}`))
    const [first, second] = [await patch(), await patch()]
    expect(second.body).toEqual(first.body)
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    const remove = () => api.delete(`/api/v1/tasks/${task.id}`, idem(`delete-${task.id}`))
    expect((await remove()).status).toBe(204)
    const again = await remove()
    expect(again.status).toBe(204)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    const { rows } = await app.db.query(`select action, count(*)::int as n from public.activity_log where record_id = $1 group by action order by action`, [task.id])
    expect(rows).toEqual([{ action: 'delete', n: 1 }, { action: 'insert', n: 1 }, { action: 'update', n: 1 }])
  })

  it('the same key for another body, path or method is a 422 that writes nothing', async () => {
    expect((await api.post('/api/v1/tasks', { title: 'First use' }, idem('reused'))).status).toBe(201)
    const otherBody = await api.post('/api/v1/tasks', { title: 'Second use' }, idem('reused'))
    expect(otherBody.status).toBe(422)
    expect(otherBody.body.error).toMatch(/different request/)
    expect((await api.post('/api/v1/projects', { title: 'First use' }, idem('reused'))).status).toBe(422)
    expect(await countTitled('Second use')).toBe(0)
  })

  it('keys belong to one API key: another key may use the same one', async () => {
    const other = await newKey()
    expect((await api.post('/api/v1/tasks', { title: 'Per key' }, idem('shared-name'))).status).toBe(201)
    const mine = await other.post('/api/v1/tasks', { title: 'Per key' }, idem('shared-name'))
    expect(mine.status).toBe(201)
    expect(mine.headers.get('idempotent-replayed')).toBeNull()
    expect(await countTitled('Per key')).toBe(2)
  })

  it('a refused request does not use the key up: the corrected request runs', async () => {
    const refused = await api.post('/api/v1/tasks', { title: 'Fixed', status: 'doing' }, idem('fix-me'))
    expect(refused.status).toBe(400)
    const fixed = await api.post('/api/v1/tasks', { title: 'Fixed', status: 'todo' }, idem('fix-me'))
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get('idempotent-replayed')).toBeNull()
  })

  it('ten concurrent copies of one request create one record; the others replay it or are told it is running', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.post('/api/v1/tasks', { title: 'Raced' }, idem('raced'))))
    expect(await countTitled('Raced')).toBe(1)
    for (const answer of answers) expect([201, 409]).toContain(answer.status)
    const created = answers.filter(answer => answer.status === 201)
    expect(created.filter(answer => answer.headers.get('idempotent-replayed') === null)).toHaveLength(1)
    for (const answer of created) expect(answer.body.title).toBe('Raced')
    for (const answer of answers.filter(a => a.status === 409)) expect(answer.body.error).toMatch(/still running/)
  })

  it('after 24 hours the key may be used again', async () => {
    expect((await api.post('/api/v1/tasks', { title: 'Yesterday' }, idem('daily'))).status).toBe(201)
    await app.db.query(`update public.idempotency_keys set expires_at = now() - interval '1 second' where key = 'daily'`)
    const today = await api.post('/api/v1/tasks', { title: 'Yesterday' }, idem('daily'))
    expect(today.headers.get('idempotent-replayed')).toBeNull()
    expect(await countTitled('Yesterday')).toBe(2)
  })

  it('an empty or over-long key is a 400; nothing written', async () => {
    for (const key of ['', 'k'.repeat(256)]) {
      const answer = await api.post('/api/v1/tasks', { title: 'Bad key' }, idem(key))
      expect(answer.status, key).toBe(400)
      expect(answer.body.error).toBe('Idempotency-Key: must be 1 to 255 characters')
    }
    expect(await countTitled('Bad key')).toBe(0)
  })
})
