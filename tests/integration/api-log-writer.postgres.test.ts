import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, createTeam, signUp } from '../support/http'
import { startStallingProxy, type StallingProxy } from '../support/tcp-proxy'
import { waitFor } from '../support/wait'

// The API log's writer on a Postgres server: two app processes writing one log, a writer whose
// database connection hangs (requests are answered all the same; what does not fit the buffer is
// dropped and counted), and a clean stop that writes everything buffered.
const metricsToken = 'metrics-token-api-log-writer-0123'
let first: TestApp
let second: TestApp
let stalled: TestApp
let proxy: StallingProxy

async function metric(app: TestApp, name: string): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text()
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
}

async function teamKey(app: TestApp, name: string) {
  const owner = await signUp(app)
  const teamId = await createTeam(owner, name)
  const answer = await owner.post(`/api/teams/${teamId}/api-keys`, { name })
  return { owner, teamId, keyId: answer.body.id as string, client: new KeyClient(app, answer.body.key) }
}

beforeAll(async () => {
  const env = { API_LOG_FLUSH_MS: '100', METRICS_TOKEN: metricsToken }
  first = await startApp(env)
  second = await startApp(env, { databaseUrl: first.databaseUrl })
  const url = new URL(first.databaseUrl)
  proxy = await startStallingProxy(url.hostname, Number(url.port || 5432))
  const viaProxy = new URL(first.databaseUrl)
  viaProxy.hostname = '127.0.0.1'
  viaProxy.port = String(proxy.port)
  stalled = await startApp({ ...env, API_LOG_BUFFER_SIZE: '5', API_LOG_DATABASE_URL: viaProxy.toString() }, { databaseUrl: first.databaseUrl })
})
afterAll(async () => {
  await stalled?.stop()
  await proxy?.close()
  await second?.stop()
  await first?.stop()
})

describe('the API log writer on Postgres', () => {
  it('two processes write one log: every request once, usage equal to the entries', async () => {
    const { owner, teamId } = await teamKey(first, 'Two writers')
    const fresh = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Both' })
    const clients = [new KeyClient(first, fresh.body.key), new KeyClient(second, fresh.body.key)]
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => clients[i % 2]!.get('/api/v1/tasks')))
    const ids = answers.map(answer => answer.headers.get('request-id'))
    expect(new Set(ids).size).toBe(40)
    const rows = await waitFor('all 40 entries', async () => {
      const { rows } = await first.db.query('select id from public.api_log_entries where api_key_id = $1', [fresh.body.id])
      return rows.length === 40 ? rows : undefined
    })
    expect(rows.map(row => row.id).sort()).toEqual([...ids].sort())
    const { rows: usage } = await first.db.query(
      `select period, sum(requests)::int as requests, sum(ok)::int as ok from public.api_usage where api_key_id = $1 group by period order by period`,
      [fresh.body.id],
    )
    expect(usage).toEqual([{ period: 'hour', requests: 40, ok: 40 }, { period: 'minute', requests: 40, ok: 40 }])
    expect(await metric(first, 'api_log_batches_written_total')).toBeGreaterThan(0)
    expect(await metric(second, 'api_log_batches_written_total')).toBeGreaterThan(0)
  })

  it('a writer whose database hangs never holds a request: what the buffer cannot keep is dropped and counted', async () => {
    const { client, keyId } = await teamKey(stalled, 'Stalled writer')
    expect((await client.get('/api/v1/tasks')).status).toBe(200)
    await waitFor('the first entry', async () => (await first.db.query('select 1 from public.api_log_entries where api_key_id = $1', [keyId])).rowCount === 1)
    proxy.stall()
    const droppedBefore = await metric(stalled, 'api_log_entries_dropped_total')
    // the requests go on at the database's speed (their own pool is not the writer's)
    for (let i = 0; i < 30; i++) expect((await client.get('/api/v1/tasks')).status).toBe(200)
    await waitFor('the buffer to fill and drop', async () => (await metric(stalled, 'api_log_entries_dropped_total')) - droppedBefore >= 20)
    expect(await metric(stalled, 'api_log_buffer_entries')).toBeLessThanOrEqual(5)
    proxy.resume()
    // what was kept is written once the database answers again: every request is written or counted
    const written = await waitFor('every request written or counted as dropped', async () => {
      const { rows } = await first.db.query('select count(*)::int as n from public.api_log_entries where api_key_id = $1', [keyId])
      const dropped = await metric(stalled, 'api_log_entries_dropped_total') - droppedBefore
      return rows[0].n - 1 + dropped === 30 ? rows[0].n as number : undefined
    })
    expect(written).toBeGreaterThan(1)
    expect(await metric(stalled, 'api_log_buffer_entries')).toBe(0)
  })

  it('a flush writes what was buffered when it began, at most 500 entries a statement, however long its statements take', async () => {
    // the writer's database answers 20 ms late: requests keep coming while each statement runs
    const url = new URL(first.databaseUrl)
    const distant = await startStallingProxy(url.hostname, Number(url.port || 5432), { answerDelayMs: 20 })
    url.hostname = '127.0.0.1'
    url.port = String(distant.port)
    // (with a rate limit these requests never reach)
    const app = await startApp({ API_LOG_FLUSH_MS: '1000', API_LOG_DATABASE_URL: url.toString(), METRICS_TOKEN: metricsToken, API_RATE_LIMIT: '1000000' }, { databaseUrl: first.databaseUrl })
    try {
      const { client, keyId } = await teamKey(app, 'Steady load')
      const batchesBefore = await metric(app, 'api_log_batches_written_total')
      // enough for several flushes
      const total = 4000
      let sent = 0
      const started = Date.now()
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (sent < total) {
          sent++
          expect((await client.get('/api/v1/tasks')).status).toBe(200)
        }
      }))
      await waitFor(`all ${total} entries`, async () => {
        const { rows } = await first.db.query('select count(*)::int as n from public.api_log_entries where api_key_id = $1', [keyId])
        return rows[0].n === total
      }, { timeoutMs: 30_000 })
      const elapsedMs = Date.now() - started
      const batches = await metric(app, 'api_log_batches_written_total') - batchesBefore
      // each flush writes what it found, in statements of up to 500, so the statements are at most
      // one per flush plus one per 500 entries; the flushes, one a second in the time it took plus
      // one under way at the start. A flush that wrote until the buffer was empty went on as long
      // as requests came, one statement of what arrived during the last one after another (46 here)
      const flushes = Math.floor(elapsedMs / 1000) + 2
      expect(batches).toBeGreaterThan(0)
      expect(batches).toBeLessThanOrEqual(flushes + Math.ceil(total / 500))
      // one statement is one transaction: its entries share their xmin
      const { rows: statements } = await first.db.query<{ entries: number }>(
        'select count(*)::int as entries from public.api_log_entries where api_key_id = $1 group by xmin::text',
        [keyId],
      )
      expect(statements.reduce((sum, statement) => sum + statement.entries, 0)).toBe(total)
      expect(Math.max(...statements.map(statement => statement.entries))).toBeLessThanOrEqual(500)
    }
    finally {
      await app.stop()
      await distant.close()
    }
  })

  it('SIGTERM with entries buffered: every one is written before the process ends', async () => {
    const app = await startApp({ API_LOG_FLUSH_MS: '60000' }, { databaseUrl: first.databaseUrl })
    try {
      const { client, keyId } = await teamKey(app, 'Clean stop')
      const answers = await Promise.all(Array.from({ length: 25 }, () => client.get('/api/v1/notes')))
      expect(answers.every(answer => answer.status === 200)).toBe(true)
      const { rows: before } = await first.db.query('select count(*)::int as n from public.api_log_entries where api_key_id = $1', [keyId])
      expect(before[0].n).toBe(0)
      await app.kill('SIGTERM')
      const { rows } = await first.db.query('select id from public.api_log_entries where api_key_id = $1', [keyId])
      expect(rows.map(row => row.id).sort()).toEqual(answers.map(answer => answer.headers.get('request-id')).sort())
    }
    finally {
      await app.stop()
    }
  })

  it('SIGTERM with a change stream and a realtime socket open: both are ended at once, then the entries are written', async () => {
    // the server waits this long for open connections before its close hooks run: a stream that
    // the stop did not end would hold it past the test
    const app = await startApp({ API_LOG_FLUSH_MS: '60000', NITRO_SHUTDOWN_TIMEOUT: '600000' }, { databaseUrl: first.databaseUrl })
    try {
      const { client, keyId } = await teamKey(app, 'Live stop')
      const key = client.key
      const stream = await fetch(`${app.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${key}` } })
      expect(stream.status).toBe(200)
      const read = { text: '', isDone: false }
      void (async () => {
        const decoder = new TextDecoder()
        for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) read.text += decoder.decode(chunk, { stream: true })
        read.isDone = true
      })().catch(() => {})
      const socket = new WebSocket(`${app.url.replace('http', 'ws')}/realtime/v1/websocket?apikey=${key}&vsn=1.0.0`)
      const closed = new Promise<number>(resolve => socket.on('close', code => resolve(code)))
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
      await waitFor('the stream to be open', () => read.text.includes(': connected'))

      const stopped = app.kill('SIGTERM')
      await waitFor('the stopping server to end the stream', () => read.isDone && read.text.includes(': The server is stopping; reconnect with Last-Event-ID'), { timeoutMs: 20_000 })
      expect(await closed).toBe(1001)
      await stopped
      // the close hooks ran: the stream's request and the socket's opening are in the log
      const { rows } = await first.db.query<{ id: string, source: string, status: number }>(
        'select id, source, status from public.api_log_entries where api_key_id = $1 order by source', [keyId])
      expect(rows.map(row => [row.source, row.status])).toEqual([['api', 200], ['realtime', 101]])
      expect(rows[0]!.id).toBe(stream.headers.get('request-id'))
    }
    finally {
      await app.kill('SIGKILL')
      await app.stop()
    }
  })
})
