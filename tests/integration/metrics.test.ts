import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { databaseKind } from '../support/database'
import { KeyClient, createTeam, signUp } from '../support/http'
import { waitFor } from '../support/wait'

const token = 'metrics-token-0123456789'
let app: TestApp

beforeAll(async () => {
  app = await startApp({ METRICS_TOKEN: token })
})
afterAll(async () => {
  await app?.stop()
})

async function scrape(authorization?: string) {
  const response = await fetch(`${app.url}/metrics`, { headers: authorization ? { authorization } : {} })
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() }
}

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find(candidate => candidate.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('GET /metrics', () => {
  it('answers Prometheus text with requests counted by route pattern and status, for the bearer token only', async () => {
    const owner = await signUp(app)
    const teamId = await createTeam(owner, 'Measured')
    const api = new KeyClient(app, (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Metrics' })).body.key)
    expect((await api.get('/api/v1/tasks')).status).toBe(200)
    expect((await api.get('/api/v1/projects')).status).toBe(200)
    expect((await api.get(`/api/v1/tasks/${randomUUID()}`)).status).toBe(404)

    const listed = 'http_requests_total{method="GET",route="/api/v1/:table",status="200"}'
    const missing = 'http_requests_total{method="GET",route="/api/v1/:table/:id",status="404"}'
    const answer = await waitFor('the three API reads to be counted', async () => {
      const scraped = await scrape(`Bearer ${token}`)
      return sample(scraped.text, listed) === 2 && sample(scraped.text, missing) === 1 && scraped
    }, { timeoutMs: 5000 })
    expect(answer.status).toBe(200)
    expect(answer.contentType).toMatch(/^text\/plain/)
    expect(answer.text).toContain('# TYPE http_requests_total counter')
    expect(sample(answer.text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/:table",status="200"}')).toBe(2)
    // the raw paths never become labels
    expect(answer.text).not.toContain('/api/v1/tasks')
    expect(answer.text).toContain('process_cpu_user_seconds_total')
    if (databaseKind() === 'postgres') expect(sample(answer.text, 'db_pool_connections')).toBeGreaterThan(0)
    // the key's first request looked it up and claimed a block; on a Postgres server the next ones found it in memory
    expect(sample(answer.text, 'rate_limit_block_claims_total')).toBeGreaterThanOrEqual(1)
    if (databaseKind() === 'postgres') {
      expect(sample(answer.text, 'api_key_cache_misses_total')).toBeGreaterThanOrEqual(1)
      expect(sample(answer.text, 'api_key_cache_hits_total')).toBeGreaterThanOrEqual(1)
    }

    for (const authorization of [undefined, 'Bearer wrong-token', token, `Basic ${token}`]) {
      const refused = await scrape(authorization)
      expect(refused.status, String(authorization)).toBe(401)
      expect(refused.text).not.toContain('http_requests_total')
    }
  })

  it('is not there without METRICS_TOKEN', async () => {
    await app.restart({ METRICS_TOKEN: '' })
    expect((await scrape(`Bearer ${token}`)).status).toBe(404)
    expect((await scrape()).status).toBe(404)
  })
})
