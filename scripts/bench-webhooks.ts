// npm run bench:webhooks — record events delivered per second, and the delay from commit to delivery,
// for a burst of 10,000 task inserts (single-statement transactions, 16 at a time, straight to Postgres)
// in a team with one endpoint subscribed to tasks.created, delivered to a receiver on 127.0.0.1 that
// answers 204 at once. Runs the app as one process, then as two processes on one database, and a bare
// baseline: the same 10,000 signed-size POSTs sent straight to the receiver, 10 at a time (what one
// worker's concurrency allows), without outbox or database.
//
// Needs a built app (`npm run build`) and a Postgres server: BENCH_DATABASE_URL, else TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/postgres. BENCH_EVENTS (default 10000) and BENCH_POLL_MS
// (the worker's poll interval, default 1000 as in production) tune the run.
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism, loadavg } from 'node:os'
import pg from 'pg'
import { startApp, type TestApp } from '../tests/support/app'

process.env.TEST_DB_KIND = 'postgres'
process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const eventCount = Number(process.env.BENCH_EVENTS ?? 10_000)
const pollMs = process.env.BENCH_POLL_MS ?? '1000'
const writers = 16
const ids = {
  user: '00000000-0000-4000-8000-00000000c001',
  team: '00000000-0000-4000-8000-00000000c010',
}

interface Receiver {
  url: string
  /** webhook-id -> arrival times (ms), one per request */
  arrivals: Map<string, number[]>
  /** task id -> first arrival (ms) */
  taskArrivals: Map<string, number>
  total: number
  close(): Promise<void>
}

async function startReceiver(): Promise<Receiver> {
  const receiver: Omit<Receiver, 'url' | 'close'> = { arrivals: new Map(), taskArrivals: new Map(), total: 0 }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', chunk => chunks.push(chunk))
    req.on('end', () => {
      const now = performance.timeOrigin + performance.now()
      receiver.total++
      const id = String(req.headers['webhook-id'] ?? '')
      receiver.arrivals.set(id, [...(receiver.arrivals.get(id) ?? []), now])
      const taskId = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { id?: string } }).data?.id
      if (taskId && !receiver.taskArrivals.has(taskId)) receiver.taskArrivals.set(taskId, now)
      res.statusCode = 204
      res.end()
    })
  })
  server.keepAliveTimeout = 1
  await new Promise<void>(done => server.listen(0, '127.0.0.1', () => done()))
  return {
    ...receiver,
    get total() {
      return receiver.total
    },
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((done) => {
      server.closeAllConnections()
      server.close(() => done())
    }),
  }
}

async function seed(db: pg.Pool, url: string) {
  await db.query(`insert into auth.users (id, email) values ($1, 'bench@example.com')`, [ids.user])
  await db.query(`insert into public.profiles (id, email, name) values ($1, 'bench@example.com', 'Bea Bench')`, [ids.user])
  await db.query(`insert into public.teams (id, name) values ($1, 'Bench Team')`, [ids.team])
  await db.query(`insert into public.webhook_secrets (team_id, secret) values ($1, 'whsec_YmVuY2gtc2VjcmV0LWJlbmNoLXNlY3JldC1iZW5jaC1zZWNyZXQ=')`, [ids.team])
  await db.query(`insert into public.webhook_endpoints (team_id, url, events) values ($1, $2, array['tasks.created'])`, [ids.team, url])
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!
}

async function waitFor(what: string, check: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`)
    await new Promise(done => setTimeout(done, 20))
  }
}

interface Result {
  label: string
  perSecond: number
  p50: number
  p99: number
  duplicates: number
}

/** One run: `processes` app processes on one fresh database; returns deliveries per second and the delays. */
async function run(processes: number): Promise<Result> {
  const receiver = await startReceiver()
  const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: pollMs }
  const apps: TestApp[] = [await startApp(env)]
  for (let i = 1; i < processes; i++) apps.push(await startApp(env, { databaseUrl: apps[0]!.databaseUrl }))
  const db = new pg.Pool({ connectionString: apps[0]!.databaseUrl, max: writers })
  try {
    await seed(db, receiver.url)
    const committedAt = new Map<string, number>()
    let next = 0
    const started = performance.timeOrigin + performance.now()
    await Promise.all(Array.from({ length: writers }, async () => {
      while (next < eventCount) {
        const i = next++
        const { rows } = await db.query<{ id: string }>(
          `insert into public.tasks (team_id, created_by, title) values ($1, $2, $3) returning id`,
          [ids.team, ids.user, `Burst ${i}`],
        )
        committedAt.set(rows[0]!.id, performance.timeOrigin + performance.now())
      }
    }))
    const written = performance.timeOrigin + performance.now()
    await waitFor('every event to arrive', () => receiver.taskArrivals.size >= eventCount, 15 * 60_000)
    const finished = Math.max(...receiver.taskArrivals.values())
    const delays = [...receiver.taskArrivals].map(([taskId, at]) => at - committedAt.get(taskId)!).sort((a, b) => a - b)
    const duplicates = receiver.total - receiver.arrivals.size
    console.log(`  ${processes} process(es): writes took ${((written - started) / 1000).toFixed(1)} s; last delivery ${((finished - started) / 1000).toFixed(1)} s after the first write`)
    return {
      label: `${processes} app process${processes > 1 ? 'es' : ''}`,
      perSecond: eventCount / ((finished - started) / 1000),
      p50: percentile(delays, 0.5),
      p99: percentile(delays, 0.99),
      duplicates,
    }
  }
  finally {
    await db.end()
    // the first one last: it drops the database
    for (const app of apps.reverse()) await app.stop()
    await receiver.close()
  }
}

/** The bare baseline: the same number of POSTs of a record-sized body straight to a receiver, 10 in flight. */
async function bare(): Promise<Result> {
  const receiver = await startReceiver()
  const url = new URL(receiver.url)
  const body = JSON.stringify({ type: 'tasks.created', timestamp: new Date().toISOString(), data: { id: '', team_id: ids.team, title: 'Burst 0', status: 'todo', priority: 3 } })
  const post = (i: number) => new Promise<void>((done, fail) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'webhook-id': `bare-${i}` } }, (res) => {
      res.resume()
      res.on('end', () => done())
    })
    req.on('error', fail)
    req.end(body)
  })
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (next < eventCount) await post(next++)
  }))
  const seconds = (performance.now() - started) / 1000
  await receiver.close()
  return { label: 'bare POSTs (no outbox)', perSecond: eventCount / seconds, p50: 0, p99: 0, duplicates: 0 }
}

async function main() {
  console.log(`bench:webhooks — ${eventCount} task inserts, worker poll ${pollMs} ms, ${availableParallelism()} cores, load average before: ${loadavg().map(n => n.toFixed(2)).join(' ')}`)
  const results = [await bare(), await run(1), await run(2)]
  const baseline = results[0]!.perSecond
  console.log('')
  console.log('| Run | Events/s | vs bare | Commit to delivery p50 | p99 | Duplicates |')
  console.log('|---|---|---|---|---|---|')
  for (const result of results) {
    const delays = result.p50 || result.p99 ? [`${result.p50.toFixed(0)} ms`, `${result.p99.toFixed(0)} ms`] : ['—', '—']
    console.log(`| ${result.label} | ${result.perSecond.toFixed(0)} | ${(result.perSecond / baseline).toFixed(2)} | ${delays[0]} | ${delays[1]} | ${result.duplicates} |`)
  }
  console.log(`\nTwo processes / one process: ${(results[2]!.perSecond / results[1]!.perSecond).toFixed(2)}; load average after: ${loadavg().map(n => n.toFixed(2)).join(' ')}`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
