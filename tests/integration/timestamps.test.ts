import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { csvRecords } from '../support/csv'
import { webhookAppForFile } from '../support/file-hooks'
import { KeyClient, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'

// One timestamp form in every answer, payload and export: UTC, `Z`, exactly three fractional
// digits (2026-11-28T00:12:13.671Z). And durations without float noise.
let app: TestApp
let fx: TeamFixture
const receiverFor = webhookAppForFile({ API_LOG_FLUSH_MS: '100' }, (started) => {
  ({ app, team: fx } = started)
})

const theForm = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const looksLikeTime = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/

/** Every string in a JSON value that looks like a time, with where it was. */
function times(value: unknown, path = '$'): [string, string][] {
  if (typeof value === 'string') return looksLikeTime.test(value) ? [[path, value]] : []
  if (Array.isArray(value)) return value.flatMap((item, i) => times(item, `${path}[${i}]`))
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => times(item, `${path}.${key}`))
  return []
}

function expectOneForm(where: string, value: unknown, atLeast = 1) {
  const found = times(value)
  expect(found.length, `${where}: times found`).toBeGreaterThanOrEqual(atLeast)
  for (const [path, time] of found) expect(time, `${where} ${path}`).toMatch(theForm)
}

async function download(path: string) {
  const response = await fetch(`${app.url}${path}`, { headers: { cookie: fx.owner.cookie } })
  expect(response.status, path).toBe(200)
  return response.text()
}

describe('one timestamp form', () => {
  it('in records, the change feed, webhook payloads, activity, the API log and their exports', async () => {
    const secret = (await fx.owner.get(`/api/teams/${fx.teamId}/webhooks/secret`)).body.secret
    const receiver = await receiverFor(secret)
    const created = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Times', scopes: { tasks: 'write', projects: 'write', webhooks: 'write' } })
    expect(created.status).toBe(201)
    const api = new KeyClient(app, created.body.key)
    const endpoint = await api.post('/api/v1/webhook-endpoints', { url: receiver.url, events: ['*'] })
    expect(endpoint.status).toBe(201)

    const task = await api.post('/api/v1/tasks', { title: 'When', due_date: '2026-12-01' })
    expect(task.status).toBe(201)
    // a time with fewer fractional digits than three
    const updated = await api.patch(`/api/v1/tasks/${task.body.id}`, { title: 'When, again', status: 'done', completed_at: '2026-11-28T00:12:13.1Z' })
    expect(updated.status).toBe(200)
    expect(updated.body.completed_at).toBe('2026-11-28T00:12:13.100Z')
    const project = await api.post('/api/v1/projects', { name: 'Timed project' })
    expect((await api.delete(`/api/v1/projects/${project.body.id}`)).status).toBe(204)
    expectOneForm('record', [task.body, updated.body, (await api.get(`/api/v1/tasks/${task.body.id}`)).body], 3)

    const received = await receiver.waitFor(4)
    for (const delivery of received) expect(delivery.verifyError).toBeNull()
    expectOneForm('webhook payloads', received.map(r => r.payload), 8)
    expect(received.find(r => r.payload!.type === 'tasks.updated')!.payload!.data.previous).toBeDefined()

    // the feed shows an event once every transaction before it has committed
    const feed = await waitFor('the four events in the change feed', async () => {
      const answer = await api.get('/api/v1/events?after=0&limit=100')
      expect(answer.status).toBe(200)
      return answer.body.length >= 4 ? answer.body : undefined
    })
    expectOneForm('change feed', feed, 8)

    const activity = await fx.owner.get(`/api/teams/${fx.teamId}/activity?limit=50`)
    expect(activity.status).toBe(200)
    expectOneForm('activity', activity.body, 8)
    const activityLines = (await download(`/api/teams/${fx.teamId}/activity/export?format=ndjson`)).trim().split('\n').map(line => JSON.parse(line))
    expectOneForm('activity NDJSON', activityLines, 8)
    const activityCsv = csvRecords(await download(`/api/teams/${fx.teamId}/activity/export?format=csv`))
    expectOneForm('activity CSV', activityCsv.map(row => ({ ...row, new_data: row.new_data ? JSON.parse(row.new_data) : null, old_data: row.old_data ? JSON.parse(row.old_data) : null })), 8)

    const log = await waitFor('the API log entries', async () => {
      const page = await fx.owner.get(`/api/teams/${fx.teamId}/api-log?api_key_id=${created.body.id}`)
      return page.body.entries?.length >= 6 ? page.body : undefined
    })
    expectOneForm('API log', log, 6)
    const logLines = (await download(`/api/teams/${fx.teamId}/api-log/export?format=ndjson&api_key_id=${created.body.id}`)).trim().split('\n').map(line => JSON.parse(line))
    expectOneForm('API log NDJSON', logLines, 6)
    expectOneForm('API log CSV', csvRecords(await download(`/api/teams/${fx.teamId}/api-log/export?format=csv&api_key_id=${created.body.id}`)), 6)
  })
})

describe('durations', () => {
  it('carry at most two decimals in the API log, its export and its CSV', async () => {
    const created = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: 'Durations' })
    const api = new KeyClient(app, created.body.key)
    for (let i = 0; i < 20; i++) await api.get('/api/v1/tasks?limit=1')
    const page = await waitFor('the API log entries', async () => {
      const answer = await fx.owner.get(`/api/teams/${fx.teamId}/api-log?api_key_id=${created.body.id}`)
      return answer.body.entries?.length >= 20 ? answer.body : undefined
    })
    const twoDecimals = /^\d+(\.\d{1,2})?$/
    for (const entry of page.entries) expect(String(entry.duration_ms)).toMatch(twoDecimals)
    const csv = csvRecords(await download(`/api/teams/${fx.teamId}/api-log/export?format=csv&api_key_id=${created.body.id}`))
    for (const row of csv) expect(row.duration_ms).toMatch(twoDecimals)
    const raw = await download(`/api/teams/${fx.teamId}/api-log?api_key_id=${created.body.id}`)
    expect(raw).not.toMatch(/"duration_ms":\d+\.\d{3,}/)
  })
})
