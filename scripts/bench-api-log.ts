// npm run bench:api-log — the API log's reads at volume: one key with BENCH_LOG_ROWS (default
// 10,000,000) entries over the last 30 days, made straight in SQL with generate_series (one day
// partition at a time) and rolled up per minute and per hour as the writer rolls them; then, over
// HTTP as the browser asks, the key's 30-day usage by hour and its first log page (and the team's),
// one request after the other, p50 and p99 of each (target: p50 < 100 ms).
//
// Needs a built app (`npm run build`; APP_BUILD_DIR is honoured) and a Postgres server:
// BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
// BENCH_LOG_ROWS and BENCH_LOG_REQUESTS (default 30 per figure) tune the run; BENCH_KEEP_DATABASE=1
// keeps the database afterwards.
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import pg from 'pg'
import { benchDatabase } from './harness/bench-database'
import { startApp, type TestApp } from './harness/app'
import { latencyBounds } from '../server/utils/api-log/latency'

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const rows = Number(process.env.BENCH_LOG_ROWS ?? 10_000_000)
const requests = Number(process.env.BENCH_LOG_REQUESTS ?? 30)
const days = 30

/** Signs up, makes a team and a key through the app; answers the session cookie, the team and the key's id. */
async function owner(base: string): Promise<{ cookie: string, teamId: string, keyId: string }> {
  const post = async (path: string, body: unknown, cookie = '') => {
    const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(body) })
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    return { body: await response.json() as Record<string, string>, cookie: response.headers.getSetCookie().map(line => line.split(';')[0]).find(pair => pair!.startsWith('nuxt-session=')) ?? cookie }
  }
  const signedUp = await post('/api/auth/signup', { email: `bench-${randomBytes(4).toString('hex')}@example.com`, password: 'correct horse battery', name: 'Bea Bench' })
  const team = await post('/api/teams', { name: 'Logged Team' }, signedUp.cookie)
  const key = await post(`/api/teams/${team.body.id}/api-keys`, { name: 'Busy key' }, signedUp.cookie)
  return { cookie: signedUp.cookie, teamId: team.body.id!, keyId: key.body.id! }
}

/** The key's entries, one day partition at a time, and their rollups, as the writer would make them. */
async function generate(databaseUrl: string, teamId: string, keyId: string) {
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  const end = Date.now()
  const start = end - days * 86_400_000
  const perDay = Math.ceil(rows / days)
  for (let day = 0; day <= days; day++) {
    const dayStart = Math.floor(start / 86_400_000) * 86_400_000 + day * 86_400_000
    await db.query('select public.api_log_ensure_partition($1::date)', [new Date(dayStart).toISOString().slice(0, 10)])
  }
  for (let day = 0; day < days; day++) {
    const from = day * perDay
    const to = Math.min(rows, from + perDay) - 1
    await db.query(
      `insert into public.api_log_entries (id, at, team_id, api_key_id, source, method, path, "table", query, status, duration_ms,
         error_code, request_bytes, response_bytes, ip, user_agent)
       select 'req_' || lpad(to_hex(i), 26, '0'), to_timestamp(($1::float8 + i * $2::float8) / 1000), $3, $4,
         case when i % 10 = 0 then 'rest' else 'api' end, case when i % 4 = 0 then 'POST' else 'GET' end,
         '/api/v1/tasks', 'tasks', case when i % 4 = 0 then null else 'limit=50' end,
         case when i % 50 = 0 then 404 when i % 97 = 0 then 429 when i % 501 = 0 then 500 when i % 4 = 0 then 201 else 200 end,
         1 + (i % 37) * 1.7, case when i % 50 = 0 then 'PGRST205' when i % 97 = 0 then 'rate_limited' when i % 501 = 0 then 'internal_error' end,
         case when i % 4 = 0 then 120 else 0 end, 2400, '10.0.0.' || (i % 200), 'bench-agent/1.0'
       from generate_series($5::bigint, $6::bigint) i`,
      [start, (end - start) / rows, teamId, keyId, from, to],
    )
    process.stdout.write(`\r[bench] ${(to + 1).toLocaleString('en')} entries`)
  }
  process.stdout.write('\n')
  const buckets = latencyBounds.map((bound, i) => `count(*) filter (where duration_ms ${i ? `> ${latencyBounds[i - 1]} and duration_ms ` : ''}<= ${bound})`)
  buckets.push(`count(*) filter (where duration_ms > ${latencyBounds.at(-1)})`)
  for (const period of ['minute', 'hour']) {
    await db.query(
      `insert into public.api_usage (team_id, credential_id, api_key_id, period, start, requests, ok, client_errors, rate_limited, server_errors, latency_buckets)
       select team_id, api_key_id, api_key_id, $1, date_trunc($1, at, 'UTC'), count(*), count(*) filter (where status < 400),
         count(*) filter (where status >= 400 and status < 500 and status <> 429), count(*) filter (where status = 429),
         count(*) filter (where status >= 500), array[${buckets.join(', ')}]::integer[]
       from public.api_log_entries where api_key_id = $2 group by team_id, api_key_id, date_trunc($1, at, 'UTC')`,
      [period, keyId],
    )
  }
  await db.query('vacuum (analyze) public.api_log_entries')
  await db.query('vacuum (analyze) public.api_usage')
  await db.end()
}

/** `count` requests one after the other; p50 and p99 in ms. */
async function timed(url: string, cookie: string, count: number): Promise<{ p50: number, p99: number }> {
  const latencies: number[] = []
  for (let i = 0; i < count + 3; i++) {
    const started = performance.now()
    const response = await fetch(url, { headers: { cookie } })
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${url}: ${response.status}`)
    if (i >= 3) latencies.push(performance.now() - started)
  }
  latencies.sort((a, b) => a - b)
  return { p50: latencies[Math.floor(latencies.length / 2)]!, p99: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]! }
}

async function main() {
  const { name, databaseUrl, drop } = await benchDatabase(serverUrl)
  let app: TestApp | undefined
  try {
    console.info(`[bench] database ${name}; starting the app (applies the migrations)...`)
    app = await startApp({}, { databaseUrl })
    const base = app.url
    const { cookie, teamId, keyId } = await owner(base)
    console.info(`[bench] generating ${rows.toLocaleString('en')} entries over ${days} days for one key...`)
    const began = performance.now()
    await generate(databaseUrl, teamId, keyId)
    console.info(`[bench] generated and rolled up in ${((performance.now() - began) / 1000).toFixed(0)} s`)
    const to = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000)
    const from = new Date(to.getTime() - days * 86_400_000)
    const load0 = loadavg()
    const figures = [
      ['30-day usage by hour, one key', `${base}/api/teams/${teamId}/api-usage?api_key_id=${keyId}&bucket=hour&from=${from.toISOString()}&to=${to.toISOString()}`],
      ['30-day usage by day, one key', `${base}/api/teams/${teamId}/api-usage?api_key_id=${keyId}&bucket=day&from=${from.toISOString()}&to=${to.toISOString()}`],
      ['first log page, one key', `${base}/api/teams/${teamId}/api-log?api_key_id=${keyId}`],
      ['first log page of 4xx, one key', `${base}/api/teams/${teamId}/api-log?api_key_id=${keyId}&status=4xx`],
      ['first log page, the team', `${base}/api/teams/${teamId}/api-log`],
    ] as const
    console.info(`\n${rows.toLocaleString('en')} entries over ${days} days, ${requests} requests one after the other per figure`)
    for (const [label, url] of figures) {
      const { p50, p99 } = await timed(url, cookie, requests)
      console.info(`${label.padEnd(34)} p50 ${p50.toFixed(1).padStart(7)} ms   p99 ${p99.toFixed(1).padStart(7)} ms   ${p50 < 100 ? 'OK' : 'MISSED'} (target p50 < 100 ms)`)
    }
    const load1 = loadavg()
    console.info(`load average before: ${load0.map(l => l.toFixed(2)).join(' ')}, after: ${load1.map(l => l.toFixed(2)).join(' ')} (2 cores)`)
  }
  finally {
    await app?.stop()
    await drop()
  }
}

await main()
