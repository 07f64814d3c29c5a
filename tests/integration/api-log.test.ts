import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, teamWithRoles, type Answer, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'

// The API log as a team sees it: every request of a known key (refused ones included) recorded
// with its fields, read back through the session routes, and usage that agrees with the log.
const limit = 12
const metricsToken = 'metrics-token-api-log-0123456789'
let app: TestApp
let fx: TeamFixture
let otherTeamId: string

beforeAll(async () => {
  app = await startApp({
    API_RATE_LIMIT: String(limit),
    API_RATE_WINDOW_SECONDS: '86400',
    API_LOG_FLUSH_MS: '100',
    API_LOG_RETENTION_INTERVAL_MS: '200',
    METRICS_TOKEN: metricsToken,
  })
  fx = await teamWithRoles(app)
  otherTeamId = (await fx.outsider.get('/api/auth/me')).body.teams.find((t: { name: string }) => t.name === 'Other Team').id
})
afterAll(() => app?.stop())

interface CreatedKey {
  id: string
  key: string
  client: KeyClient
}

async function createKey(name: string, fields: Record<string, unknown> = {}): Promise<CreatedKey> {
  const answer = await fx.owner.post(`/api/teams/${fx.teamId}/api-keys`, { name, ...fields })
  expect(answer.status).toBe(201)
  return { id: answer.body.id, key: answer.body.key, client: new KeyClient(app, answer.body.key) }
}

const requestIdPattern = /^req_[0-9A-Za-z]{26,}$/
const logPath = (query = '') => `/api/teams/${fx.teamId}/api-log${query}`

/** The entry of a request id, once the writer has written it. */
async function entryOf(requestId: string) {
  return waitFor(`the API log entry ${requestId}`, async () => {
    const answer = await fx.admin.get(logPath(`/${requestId}`))
    return answer.status === 200 ? answer.body : undefined
  })
}

/** Every entry matching a query, through the cursor. */
async function allEntries(query: string) {
  const entries: Record<string, unknown>[] = []
  let cursor: string | null = null
  do {
    const answer: Answer = await fx.owner.get(logPath(`?${query}&limit=7${cursor ? `&cursor=${cursor}` : ''}`))
    expect(answer.status).toBe(200)
    entries.push(...answer.body.entries)
    cursor = answer.body.next_cursor
  } while (cursor)
  return entries
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text()
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
}

describe('Request-Id', () => {
  it('is on every answer of /api/v1, /rest/v1 and /mcp, unique, and in every error body', async () => {
    const { client } = await createKey('Ids')
    const answers = [
      await client.get('/api/v1/tasks'),
      await client.get('/rest/v1/tasks', { apikey: client.key }),
      await client.get('/api/v1/nope'),
      await new KeyClient(app, 'not-a-key').get('/api/v1/tasks'),
      await client.post('/api/v1/tasks', '{"title":', {}),
      await client.request('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'application/json, text/event-stream' }),
      await client.request('GET', '/mcp'),
    ]
    const ids = answers.map(answer => answer.headers.get('request-id'))
    for (const id of ids) expect(id).toMatch(requestIdPattern)
    expect(new Set(ids).size).toBe(ids.length)
    for (const [i, answer] of answers.entries()) {
      if (answer.status >= 400) expect(answer.body.request_id, `answer ${i}`).toBe(ids[i])
    }
    // a session route has none
    expect((await fx.owner.get(`/api/teams/${fx.teamId}`)).headers.get('request-id')).toBeNull()
  })

  it('keeps the client\'s X-Request-Id beside its own, never in its place; one too long or not printable is not kept', async () => {
    const { client } = await createKey('Client ids')
    const own = await client.get('/api/v1/notes', { 'x-request-id': 'integration-42' })
    expect(own.headers.get('request-id')).toMatch(requestIdPattern)
    expect((await entryOf(own.headers.get('request-id')!)).client_request_id).toBe('integration-42')
    const tooLong = await client.get('/api/v1/notes', { 'x-request-id': 'x'.repeat(201) })
    expect((await entryOf(tooLong.headers.get('request-id')!)).client_request_id).toBeNull()
  })
})

describe('what an entry records', () => {
  it('a success: every field', async () => {
    const { id: keyId, client } = await createKey('Fields')
    const answer = await client.get('/api/v1/tasks?select=id,title&limit=2', { 'user-agent': 'integration-agent/1.0', 'x-request-id': 'abc-1' })
    expect(answer.status).toBe(200)
    const requestId = answer.headers.get('request-id')!
    const entry = await entryOf(requestId)
    expect(entry).toEqual({
      id: requestId,
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      api_key_id: keyId,
      api_key_name: 'Fields',
      grant_id: null,
      source: 'api',
      method: 'GET',
      path: '/api/v1/tasks',
      table: 'tasks',
      query: 'select=id,title&limit=2',
      status: 200,
      duration_ms: expect.any(Number),
      error_code: null,
      mcp_method: null,
      mcp_tool: null,
      request_bytes: 0,
      response_bytes: expect.any(Number),
      ip: '127.0.0.1',
      user_agent: 'integration-agent/1.0',
      client_request_id: 'abc-1',
    })
    expect(entry.duration_ms).toBeGreaterThan(0)
    expect(entry.response_bytes).toBeGreaterThan(0)
    const length = answer.headers.get('content-length')
    if (length && !answer.headers.get('content-encoding')) expect(entry.response_bytes).toBe(Number(length))
    expect(Math.abs(Date.parse(entry.at) - Date.now())).toBeLessThan(60_000)
    // a long user agent is cut at 256 characters; a secret-looking query parameter is never kept
    const long = await client.get('/rest/v1/tasks?apikey=very-secret-value&select=id', { 'user-agent': 'u'.repeat(300) })
    const longEntry = await entryOf(long.headers.get('request-id')!)
    expect(longEntry.user_agent).toBe('u'.repeat(256))
    expect(longEntry.source).toBe('rest')
    expect(longEntry.query).toBe('apikey=[redacted]&select=id')
  })

  it('400, 403 and 404: the status, the body\'s code and the request\'s size', async () => {
    const { id: keyId, client } = await createKey('Errors', { scopes: { tasks: 'read', notes: 'write' } })
    const body = JSON.stringify({ title: 42 })
    const bad = await client.post('/api/v1/notes', body)
    expect(bad.status).toBe(400)
    const forbidden = await client.post('/api/v1/tasks', { title: 'Not allowed' })
    expect(forbidden.status).toBe(403)
    const missing = await client.get('/api/v1/nope?x=1')
    expect(missing.status).toBe(404)
    for (const [answer, status] of [[bad, 400], [forbidden, 403], [missing, 404]] as const) {
      const entry = await entryOf(answer.headers.get('request-id')!)
      expect(entry).toMatchObject({ api_key_id: keyId, status, error_code: answer.body.code, source: 'api' })
      expect(answer.body.request_id).toBe(entry.id)
    }
    expect((await entryOf(missing.body.request_id)).table).toBeNull()
    expect((await entryOf(forbidden.body.request_id)).table).toBe('tasks')
    const badEntry = await entryOf(bad.body.request_id)
    expect(badEntry).toMatchObject({ method: 'POST', path: '/api/v1/notes', table: 'notes', request_bytes: Buffer.byteLength(body) })
  })

  it('429: a request over the key\'s limit is recorded as rate limited', async () => {
    const { id: keyId, client } = await createKey('Limited')
    let refused: Answer | undefined
    for (let i = 0; i <= limit && !refused; i++) {
      const answer = await client.get('/api/v1/projects')
      if (answer.status === 429) refused = answer
    }
    expect(refused?.status).toBe(429)
    const entry = await entryOf(refused!.headers.get('request-id')!)
    expect(entry).toMatchObject({ api_key_id: keyId, status: 429, error_code: refused!.body.code })
  })

  it('401 with a revoked key and with an expired key: in the key\'s log; an unknown key is counted in /metrics only', async () => {
    const revoked = await createKey('Revoked')
    expect((await revoked.client.get('/api/v1/tasks')).status).toBe(200)
    expect((await fx.owner.patch(`/api/teams/${fx.teamId}/api-keys/${revoked.id}`, {})).status).toBe(200)
    const afterRevoke = await revoked.client.get('/api/v1/tasks')
    expect(afterRevoke.status).toBe(401)
    // twice: the second time this instance knows the key is revoked without asking the database
    const again = await revoked.client.get('/api/v1/tasks')
    for (const answer of [afterRevoke, again]) {
      expect(await entryOf(answer.headers.get('request-id')!)).toMatchObject({ api_key_id: revoked.id, status: 401, error_code: answer.body.code })
    }

    const expired = await createKey('Expired', { expires_at: new Date(Date.now() + 3_600_000).toISOString() })
    expect((await expired.client.get('/api/v1/tasks')).status).toBe(200)
    await app.db.query(`update public.api_keys set expires_at = now() - interval '1 second' where id = $1`, [expired.id])
    const afterExpiry = await waitFor('the key to be refused as expired', async () => {
      const answer = await expired.client.get('/api/v1/tasks')
      return answer.status === 401 ? answer : undefined
    })
    expect(afterExpiry.body.error).toMatch(/expired/)
    expect(await entryOf(afterExpiry.headers.get('request-id')!)).toMatchObject({ api_key_id: expired.id, status: 401 })

    const before = await metric('api_requests_unknown_credential_total')
    const unknown = await new KeyClient(app, 'an-unknown-key-0123456789').get('/api/v1/tasks')
    expect(unknown.status).toBe(401)
    await waitFor('the unknown credential to be counted', async () => (await metric('api_requests_unknown_credential_total')) >= before + 1)
    const { rows } = await app.db.query('select count(*)::int as n from public.api_log_entries where id = $1', [unknown.headers.get('request-id')])
    expect(rows[0].n).toBe(0)
  })

  it('MCP calls: the JSON-RPC method and the tool', async () => {
    const { id: keyId, key } = await createKey('Agent')
    const ids: string[] = []
    const mcp = new McpClient({ name: 'log-agent', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
      requestInit: { headers: { 'authorization': `Bearer ${key}`, 'user-agent': 'log-agent' } },
      fetch: async (url, init) => {
        const response = await fetch(url, init)
        const id = response.headers.get('request-id')
        if (id) ids.push(id)
        return response
      },
    }))
    await mcp.listTools()
    const result = await mcp.callTool({ name: 'query_database', arguments: { sql: 'select count(*) from tasks' } })
    expect(result.isError).toBeFalsy()
    await mcp.close()
    const entries = await waitFor('the MCP entries', async () => {
      const answer = await fx.owner.get(logPath(`?api_key_id=${keyId}&source=mcp&limit=100`))
      const found = answer.body.entries as Record<string, unknown>[]
      return ids.every(id => found.some(entry => entry.id === id)) ? found : undefined
    })
    const calls = entries.map(entry => [entry.mcp_method, entry.mcp_tool, entry.source, entry.path])
    expect(calls).toContainEqual(['initialize', null, 'mcp', '/mcp'])
    expect(calls).toContainEqual(['tools/list', null, 'mcp', '/mcp'])
    expect(calls).toContainEqual(['tools/call', 'query_database', 'mcp', '/mcp'])
    // every request the agent's client made is in the log, the closing DELETE (a 405 here) too
    expect(entries.map(entry => entry.id).sort()).toEqual([...ids].sort())
  })
})

describe('the log\'s routes', () => {
  let key: CreatedKey
  beforeAll(async () => {
    key = await createKey('Listed')
    await key.client.get('/api/v1/tasks')
    await key.client.get('/api/v1/notes')
    await key.client.post('/api/v1/tasks', { title: 'Logged' })
    await key.client.post('/api/v1/tasks', { title: 7 })
    await key.client.get('/api/v1/nope')
    for (let i = 0; i < 5; i++) await key.client.get(`/api/v1/projects?limit=${i + 1}`)
    await waitFor('the key\'s 10 entries', async () => (await fx.owner.get(logPath(`?api_key_id=${key.id}&limit=100`))).body.entries.length === 10)
  })

  it('filters, newest first, and the cursor pages through every entry once', async () => {
    const every = await allEntries(`api_key_id=${key.id}`)
    expect(every).toHaveLength(10)
    expect(new Set(every.map(entry => entry.id)).size).toBe(10)
    const order = every.map(entry => `${entry.at}|${entry.id}`)
    expect([...order].sort().reverse()).toEqual(order)
    const count = async (query: string) => (await allEntries(`api_key_id=${key.id}&${query}`)).length
    expect(await count('method=POST')).toBe(2)
    expect(await count('method=post&status=201')).toBe(1)
    expect(await count('status=4xx')).toBe(2)
    expect(await count('status=2xx')).toBe(8)
    expect(await count('table=projects')).toBe(5)
    expect(await count('source=api')).toBe(10)
    expect(await count('source=mcp')).toBe(0)
    expect(await count(`from=${encodeURIComponent(every[0]!.at as string)}`)).toBeGreaterThanOrEqual(1)
    expect(await count(`to=${encodeURIComponent(every[9]!.at as string)}`)).toBe(0)
    const one = await allEntries(`request_id=${every[3]!.id}`)
    expect(one.map(entry => entry.id)).toEqual([every[3]!.id])
    // an id this app did not make (no time in it) is no entry's
    expect(await allEntries('request_id=not-an-id')).toEqual([])
    const page = await fx.owner.get(logPath(`?api_key_id=${key.id}&limit=3`))
    expect(page.body.entries).toHaveLength(3)
    expect(page.body.next_cursor).toEqual(expect.any(String))
  })

  it('refuses bad filters with a 400 naming them', async () => {
    for (const query of ['limit=0', 'limit=101', 'status=abc', 'source=web', 'cursor=bm90LWEtY3Vyc29y', 'from=yesterday', 'api_key_id=12']) {
      const answer = await fx.owner.get(logPath(`?${query}`))
      expect(answer.status, query).toBe(400)
      expect(answer.body.error, query).toMatch(new RegExp(query.split('=')[0]!))
    }
  })

  it('one entry; another team\'s entry is a 404, and a member or another team\'s owner is refused', async () => {
    const [entry] = await allEntries(`api_key_id=${key.id}`)
    expect((await fx.owner.get(logPath(`/${entry!.id}`))).body.id).toBe(entry!.id)
    expect((await fx.owner.get(logPath('/req_00000000000000000000000000'))).status).toBe(404)
    expect((await fx.owner.get(logPath('/not-an-id'))).status).toBe(404)
    // the other team's owner, through their own team: 404
    expect((await fx.outsider.get(`/api/teams/${otherTeamId}/api-log/${entry!.id}`)).status).toBe(404)
    expect((await fx.outsider.get(`/api/teams/${otherTeamId}/api-log?request_id=${entry!.id}`)).body.entries).toEqual([])
    // and through ours: not a member
    for (const path of [logPath(), logPath(`/${entry!.id}`), `/api/teams/${fx.teamId}/api-usage`, logPath('/export?format=csv')]) {
      expect((await fx.outsider.get(path)).status, path).toBe(404)
      expect((await fx.member.get(path)).status, path).toBe(403)
      expect((await fx.anonymous.get(path)).status, path).toBe(401)
    }
  })

  it('usage: every bucket present, totals equal to the log\'s counts', async () => {
    const entries = await allEntries(`api_key_id=${key.id}`)
    const times = entries.map(entry => Date.parse(entry.at as string))
    const from = new Date(Math.floor(Math.min(...times) / 60_000) * 60_000 - 120_000)
    const to = new Date(Math.floor(Math.max(...times) / 60_000) * 60_000 + 180_000)
    const answer = await fx.owner.get(`/api/teams/${fx.teamId}/api-usage?api_key_id=${key.id}&bucket=minute&from=${from.toISOString()}&to=${to.toISOString()}`)
    expect(answer.status).toBe(200)
    const buckets = answer.body.buckets as Record<string, number | string | null>[]
    expect(buckets).toHaveLength((to.getTime() - from.getTime()) / 60_000)
    expect(buckets[0]!.start).toBe(from.toISOString())
    expect(buckets[0]).toEqual({ start: from.toISOString(), requests: 0, ok: 0, client_errors: 0, rate_limited: 0, server_errors: 0, p50_ms: null, p95_ms: null })
    const sum = (field: string) => buckets.reduce((total, bucket) => total + (bucket[field] as number), 0)
    expect(sum('requests')).toBe(entries.length)
    expect(sum('ok')).toBe(entries.filter(entry => (entry.status as number) < 400).length)
    expect(sum('client_errors')).toBe(entries.filter(entry => (entry.status as number) >= 400 && entry.status !== 429 && (entry.status as number) < 500).length)
    expect(sum('rate_limited') + sum('server_errors')).toBe(0)
    const busy = buckets.filter(bucket => (bucket.requests as number) > 0)
    for (const bucket of busy) {
      expect(bucket.p50_ms).toEqual(expect.any(Number))
      expect(bucket.p95_ms as number).toBeGreaterThanOrEqual(bucket.p50_ms as number)
    }
    // by hour and by day, the same totals
    for (const bucket of ['hour', 'day']) {
      const wide = await fx.owner.get(`/api/teams/${fx.teamId}/api-usage?api_key_id=${key.id}&bucket=${bucket}&from=${new Date(Date.now() - 2 * 86_400_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`)
      expect(wide.body.buckets.reduce((total: number, row: { requests: number }) => total + row.requests, 0), bucket).toBe(entries.length)
    }
    for (const query of ['bucket=week', 'from=2026-01-01T00:00:00Z&to=2025-01-01T00:00:00Z', 'from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'bucket=minute&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z']) {
      expect((await fx.owner.get(`/api/teams/${fx.teamId}/api-usage?${query}`)).status, query).toBe(400)
    }
  })

  it('export: every matching entry as CSV or NDJSON', async () => {
    const entries = await allEntries(`api_key_id=${key.id}`)
    const ndjson = await fetch(`${app.url}${logPath(`/export?format=ndjson&api_key_id=${key.id}`)}`, { headers: { cookie: fx.owner.cookie } })
    expect(ndjson.status).toBe(200)
    expect(ndjson.headers.get('content-type')).toMatch(/ndjson/)
    const lines = (await ndjson.text()).trim().split('\n').map(line => JSON.parse(line))
    expect(lines).toEqual(entries)
    const csv = await fetch(`${app.url}${logPath(`/export?format=csv&api_key_id=${key.id}&method=POST`)}`, { headers: { cookie: fx.owner.cookie } })
    const rows = (await csv.text()).trim().split('\r\n')
    expect(rows[0]).toMatch(/^id,at,api_key_id,api_key_name,grant_id,source,method,path,table,query,status,duration_ms/)
    expect(rows).toHaveLength(3)
    expect((await fx.owner.get(logPath('/export?format=xml'))).status).toBe(400)
  })
})

describe('retention', () => {
  it('api_log_retention_days: 1 to 90, default 30; older entries, usage and whole old partitions go', async () => {
    const team = await fx.owner.get(`/api/teams/${fx.teamId}`)
    expect(team.body.api_log_retention_days).toBe(30)
    for (const days of [0, 91, 2.5, '7']) {
      const answer = await fx.owner.patch(`/api/teams/${fx.teamId}`, { api_log_retention_days: days })
      expect(answer.status, String(days)).toBe(400)
      expect(answer.body.error).toMatch(/api_log_retention_days/)
    }
    expect((await fx.admin.patch(`/api/teams/${fx.teamId}`, { api_log_retention_days: 5 })).status).toBeLessThan(300)
    const { id: keyId } = await createKey('Old')
    // entries and usage of 3 and of 10 days ago, written as the writer would
    for (const daysAgo of [3, 10]) {
      const at = new Date(Date.now() - daysAgo * 86_400_000)
      await app.db.query('select public.api_log_ensure_partition($1::date)', [at.toISOString().slice(0, 10)])
      await app.db.query(
        `insert into public.api_log_entries (id, at, team_id, api_key_id, source, method, path, status, duration_ms, request_bytes, response_bytes)
         values ($1, $2, $3, $4, 'api', 'GET', '/api/v1/tasks', 200, 1, 0, 10)`,
        [`req_OLD${daysAgo}`.padEnd(30, '0'), at.toISOString(), fx.teamId, keyId],
      )
      await app.db.query(
        `insert into public.api_usage (team_id, credential_id, api_key_id, period, start, requests, ok, client_errors, rate_limited, server_errors, latency_buckets)
         values ($1, $2, $2, 'hour', date_trunc('hour', $3::timestamptz), 1, 1, 0, 0, 0, '{1}')`,
        [fx.teamId, keyId, at.toISOString()],
      )
    }
    // a partition older than any team keeps (the longest retention is 30 days here)
    const ancient = new Date(Date.now() - 100 * 86_400_000).toISOString().slice(0, 10)
    await app.db.query('select public.api_log_ensure_partition($1::date)', [ancient])
    const partition = `api_log_entries_${ancient.replaceAll('-', '')}`
    const remaining = async () => (await app.db.query(
      `select (select count(*)::int from public.api_log_entries where api_key_id = $1) as entries,
              (select count(*)::int from public.api_usage where api_key_id = $1) as usage,
              to_regclass($2) is not null as ancient`,
      [keyId, `public.${partition}`],
    )).rows[0]
    await waitFor('the retention to apply', async () => {
      const now = await remaining()
      return now.entries === 1 && now.usage === 1 && !now.ancient ? now : undefined
    })
    const { rows } = await app.db.query('select id from public.api_log_entries where api_key_id = $1', [keyId])
    expect(rows[0].id).toMatch(/^req_OLD3/)
    expect((await fx.admin.patch(`/api/teams/${fx.teamId}`, { api_log_retention_days: 1 })).body.api_log_retention_days).toBe(1)
    await waitFor('the 3-day-old entry to go', async () => (await remaining()).entries === 0)
    await fx.owner.patch(`/api/teams/${fx.teamId}`, { api_log_retention_days: 30 })
  })
})

describe('secrets', () => {
  it('no text column of the database holds a raw key, an Authorization header, the session cookie or a rejected body', async () => {
    const { key, client } = await createKey('Secret')
    const marker = `MARKER-${Date.now()}-rejected-body`
    const rejected = await client.post('/api/v1/tasks', { title: 12, description: marker })
    expect(rejected.status).toBe(400)
    const rejectedMcp = await client.request('POST', '/mcp', `{"broken": "${marker}`, { 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' })
    expect(rejectedMcp.status).toBe(400)
    await entryOf(rejected.body.request_id)
    await entryOf(rejectedMcp.body.request_id)
    const cookieValue = fx.owner.cookie.split('=').slice(1).join('=')
    const needles = [key, `Bearer ${key}`, cookieValue, marker]
    const { rows: columns } = await app.db.query(
      `select table_schema, table_name, column_name from information_schema.columns c
       join pg_class k on k.relname = c.table_name and k.relnamespace = c.table_schema::regnamespace and k.relkind in ('r', 'p')
       where table_schema not in ('pg_catalog', 'information_schema')
         and data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'USER-DEFINED', 'ARRAY', 'bytea')`,
    )
    expect(columns.length).toBeGreaterThan(20)
    const found: string[] = []
    for (const column of columns) {
      const { rows } = await app.db.query(
        `select count(*)::int as n from "${column.table_schema}"."${column.table_name}"
         where ${['', '', '', ''].map((_, i) => `strpos("${column.column_name}"::text, $${i + 1}) > 0`).join(' or ')}`,
        needles,
      )
      if (rows[0].n) found.push(`${column.table_schema}.${column.table_name}.${column.column_name}`)
    }
    expect(found).toEqual([])
  })
})
