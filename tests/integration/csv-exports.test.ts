import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { csvRecords, isFormula } from '../support/csv'
import { KeyClient, teamWithRoles, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'

// Every CSV the app writes (the API log export, the activity export, the public API's text/csv)
// is RFC 4180 and safe to open in a spreadsheet: a cell that begins with =, +, -, @, a tab or a
// carriage return starts with a ' instead, whoever wrote the value.
let app: TestApp
let fx: TeamFixture
let api: KeyClient
let keyId: string
const hostileAgent = '=HYPERLINK("http://x","y")'
const hostileQueries = ['=SUM(1,2)', '+1=2', '-1=2', '@A1=1']
const hostileTitles = ['=HYPERLINK("http://x","y")', '+1+2', '-2+3', '@SUM(A1)', '\t=1+2', '\r=1+2', 'line one\r\n=2+2']
/** A title as its cell reads: with a leading ' when it starts as a formula would. */
const cellOf = (title: string) => isFormula(title) ? `'${title}` : title

beforeAll(async () => {
  app = await startApp({ API_LOG_FLUSH_MS: '100' })
  fx = await teamWithRoles(app)
  const created = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name: '=1+1 importer' })
  expect(created.status).toBe(201)
  keyId = created.body.id
  api = new KeyClient(app, created.body.key)
})
afterAll(() => app?.stop())

async function download(path: string) {
  const response = await fetch(`${app.url}${path}`, { headers: { cookie: fx.owner.cookie } })
  expect(response.status, path).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/csv/)
  return csvRecords(await response.text())
}

function expectNoFormula(rows: Record<string, string>[]) {
  for (const row of rows) {
    for (const [column, cell] of Object.entries(row)) expect(isFormula(cell), `${column}: ${JSON.stringify(cell)}`).toBe(false)
  }
}

describe('CSV exports are safe to open in a spreadsheet', () => {
  it('the API log export defuses the caller\'s user agent, query and request id', async () => {
    for (const query of hostileQueries) {
      const answer = await api.get(`/api/v1/tasks?${query}`, { 'user-agent': hostileAgent, 'x-request-id': '-2+3' })
      expect(answer.headers.get('request-id')).toBeTruthy()
    }
    await waitFor('the four entries', async () => {
      const page = await fx.owner.get(`/api/teams/${fx.teamId}/api-log?api_key_id=${keyId}`)
      return page.body.entries?.length >= hostileQueries.length
    })
    const rows = await download(`/api/teams/${fx.teamId}/api-log/export?format=csv&api_key_id=${keyId}`)
    expect(rows).toHaveLength(hostileQueries.length)
    expectNoFormula(rows)
    for (const row of rows) {
      expect(row.user_agent).toBe(`'${hostileAgent}`)
      expect(row.client_request_id).toBe(`'-2+3`)
      expect(row.api_key_name).toBe(`'=1+1 importer`)
    }
    expect(rows.map(row => row.query).sort()).toEqual(hostileQueries.map(query => `'${query}`).sort())
  })

  it('the activity export and the public API\'s text/csv defuse the values people typed', async () => {
    const ids: string[] = []
    for (const title of hostileTitles) {
      const created = await api.post('/api/v1/tasks', { title })
      expect(created.status, title).toBe(201)
      ids.push(created.body.id)
    }
    const activity = await download(`/api/teams/${fx.teamId}/activity/export?format=csv&table=tasks`)
    expectNoFormula(activity)
    expect(activity.map(row => row.record_title).sort()).toEqual(hostileTitles.map(cellOf).sort())
    for (const row of activity) expect(row.api_key_name).toBe(`'=1+1 importer`)

    const response = await fetch(`${app.url}/api/v1/tasks?select=title,priority&id=in.(${ids.join(',')})`, { headers: { authorization: `Bearer ${api.key}`, accept: 'text/csv' } })
    expect(response.status).toBe(200)
    // the public API writes CSV as PostgREST does (LF between lines), its fields by the same writer
    const records = csvRecords(await response.text(), 'postgrest')
    expectNoFormula(records)
    expect(records.map(row => row.title).sort()).toEqual(hostileTitles.map(cellOf).sort())
  })
})
