// npm run bench:webhooks — how fast record events reach a receiver, in one run:
// - steady: 20 task inserts a second (single-statement transactions, straight to Postgres) for
//   BENCH_STEADY_SECONDS (default 15); the delay from each insert's commit to its delivery, p50 and p99;
// - burst: BENCH_EVENTS (default 5,000) tasks inserted in one statement (a bulk import); events
//   delivered per second from its commit (every event queued at once) to the last delivery: the
//   sender's rate, the figure compared with bare;
// - burst with writes: as many inserts again, in statements of 100 rows, 16 at a time; events per
//   second from the first write to the last delivery, so the writes' own time (their triggers queue
//   the deliveries) counts too;
// - bare: the same number of POSTs (a record's body, the app's headers) sent straight to the
//   receiver by a sender process of its own, 10 at a time, on keep-alive connections (as real
//   senders do), without outbox or database: the rate the burst is compared with.
// The bare sender runs just before and just after each burst, and the burst is compared with the
// mean of the two (the machine's load changes within a run). Both are measured warm: before the
// burst the app delivers BENCH_WARM_EVENTS (default 2,000) unmeasured events, and the bare sender
// sends as many unmeasured POSTs before its timed ones (a fresh process compiles its hot paths
// first; V8's background threads then use over half as much CPU as the main thread). The app runs as one process, then as
// two processes on one database. The team has one endpoint
// subscribed to tasks.created; the receiver on 127.0.0.1 answers 204 at once and keeps connections
// alive (5 s idle, Node's default), as real receivers do.
//
// Needs a built app (`npm run build`) and a Postgres server: BENCH_DATABASE_URL, else TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/postgres. BENCH_POLL_MS is the worker's poll interval
// (default 1000, as in production: the worker is woken by notifications, the poll is a fallback).
// BENCH_PROFILE=<dir> makes each app process write a CPU profile (node --cpu-prof) into <dir> when it
// stops, and the run print when its burst began and ended on the profile's clock, to cut the burst out.
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { availableParallelism, loadavg } from 'node:os'
import { resolve } from 'node:path'
import pg from 'pg'
import { postgresCpuMs, processCpuMs } from './bench-cpu'
import { startApp, type TestApp } from './harness/app'

process.env.TEST_DB_KIND = 'postgres'
process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const eventCount = Number(process.env.BENCH_EVENTS ?? 5_000)
const steadySeconds = Number(process.env.BENCH_STEADY_SECONDS ?? 15)
const warmEvents = Number(process.env.BENCH_WARM_EVENTS ?? 2_000)
const steadyRate = 20
/** The burst is written in statements of this many rows, so that the writes take a small part of the run. */
const burstStatementRows = 100
const pollMs = process.env.BENCH_POLL_MS ?? '1000'
const profileDir = process.env.BENCH_PROFILE ? resolve(process.env.BENCH_PROFILE) : undefined
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
  server.keepAliveTimeout = 5_000
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
  await db.query(`insert into public.webhook_secrets (team_id, secret) values ($1, $2)`, [ids.team, secret])
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
  /** the bare sender's rate just before and just after this run's burst */
  bareBefore: number
  bareAfter: number
  /** the bare outbox's rates, after the burst: claims that update the rows, and claims held open while sending */
  bareOutbox: number
  bareOutboxHeld: number
  perSecond: number
  /** commit-to-delivery at 20 writes a second */
  p50: number
  p99: number
  /** events per second from the first write of the burst with writes to its last delivery */
  withWritesPerSecond: number
  /** commit-to-delivery in the burst */
  burstP50: number
  burstP99: number
  duplicates: number
}

const now = () => performance.timeOrigin + performance.now()

/** CPU seconds used so far (user and system) by the Postgres server's processes, by the app processes and by this one (its receiver); zeros where /proc is missing. */
function cpuSeconds(appPids: number[]): { postgres: number, app: number, bench: number } {
  const app = appPids.reduce((sum, pid) => sum + (processCpuMs(pid) ?? 0), 0)
  const { user, system } = process.cpuUsage()
  return { postgres: (postgresCpuMs() ?? 0) / 1000, app: app / 1000, bench: (user + system) / 1e6 }
}

/** What the CPU did between two readings, per delivery (ms). */
function cpuPerEvent(before: ReturnType<typeof cpuSeconds>, after: ReturnType<typeof cpuSeconds>, events: number): string {
  const ms = (key: keyof typeof before) => (((after[key] - before[key]) * 1000) / events).toFixed(3)
  return `CPU per event: Postgres ${ms('postgres')} ms, app ${ms('app')} ms, this process (receiver) ${ms('bench')} ms`
}

/** A time from now() on the monotonic clock in µs, the clock of a CPU profile's startTime and endTime (Linux). */
function monotonicMicros(at: number): number {
  return Math.round(Number(process.hrtime.bigint() / 1000n) - (now() - at) * 1000)
}

async function insertTask(db: pg.Pool, title: string, committedAt: Map<string, number>) {
  const { rows } = await db.query<{ id: string }>(
    `insert into public.tasks (team_id, created_by, title) values ($1, $2, $3) returning id`,
    [ids.team, ids.user, title],
  )
  committedAt.set(rows[0]!.id, now())
}

/** Tasks `Burst first` to `Burst first + count - 1` in one statement (one transaction). */
async function insertTasks(db: pg.Pool, first: number, count: number, committedAt: Map<string, number>) {
  const { rows } = await db.query<{ id: string }>(
    `insert into public.tasks (team_id, created_by, title)
     select $1, $2, 'Burst ' || n from generate_series($3::int, $4::int) as n returning id`,
    [ids.team, ids.user, first, first + count - 1],
  )
  const at = now()
  for (const row of rows) committedAt.set(row.id, at)
}

/** The delays from commit to first arrival of the tasks in `committedAt`, sorted, once all have arrived. */
async function delaysOf(receiver: Receiver, committedAt: Map<string, number>): Promise<number[]> {
  await waitFor('every event to arrive', () => [...committedAt.keys()].every(id => receiver.taskArrivals.has(id)), 15 * 60_000)
  return [...committedAt].map(([taskId, at]) => receiver.taskArrivals.get(taskId)! - at).sort((a, b) => a - b)
}

/** One run: `processes` app processes on one fresh database; a steady phase, then a burst. */
async function run(processes: number): Promise<Result> {
  const receiver = await startReceiver()
  const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: pollMs }
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
  const apps: TestApp[] = [await startApp(env, { nodeArgs })]
  for (let i = 1; i < processes; i++) apps.push(await startApp(env, { databaseUrl: apps[0]!.databaseUrl, nodeArgs }))
  const db = new pg.Pool({ connectionString: apps[0]!.databaseUrl, max: writers })
  try {
    await seed(db, receiver.url)
    // steady: one insert every 50 ms, each on its own schedule (a slow one does not delay the next)
    const steady = new Map<string, number>()
    const writes: Promise<void>[] = []
    const steadyStart = now()
    for (let i = 0; i < steadySeconds * steadyRate; i++) {
      const due = steadyStart + (i * 1000) / steadyRate
      await new Promise(done => setTimeout(done, Math.max(0, due - now())))
      writes.push(insertTask(db, `Steady ${i}`, steady))
    }
    await Promise.all(writes)
    const steadyDelays = await delaysOf(receiver, steady)
    // an unmeasured burst first: a fresh process compiles its hot paths (V8's background threads
    // then used over half as much CPU as the main thread), as a sender running for a while has done
    if (warmEvents > 0) {
      const warm = new Map<string, number>()
      await insertTasks(db, 3 * eventCount, warmEvents, warm)
      await delaysOf(receiver, warm)
    }

    // the bare sender just before and just after the burst (the machine's load changes within a run)
    const bareBefore = await bare()
    // burst: one statement queues every event at once
    const burst = new Map<string, number>()
    const writeStarted = now()
    await insertTasks(db, 0, eventCount, burst)
    const started = now()
    const cpuBefore = cpuSeconds(apps.map(app => app.pid))
    const burstDelays = await delaysOf(receiver, burst)
    const cpuAfter = cpuSeconds(apps.map(app => app.pid))
    const finished = Math.max(...[...burst.keys()].map(id => receiver.taskArrivals.get(id)!))
    const bareAfter = await bare()
    await createBareOutbox(db)
    const outbox = await bareOutbox(db, apps[0]!.databaseUrl, 'update')
    const heldOutbox = await bareOutbox(db, apps[0]!.databaseUrl, 'held')

    // burst with writes: statements of 100 rows, 16 at a time, delivered while they are written
    const withWrites = new Map<string, number>()
    let next = eventCount
    const withWritesStarted = now()
    await Promise.all(Array.from({ length: writers }, async () => {
      while (next < 2 * eventCount) {
        const first = next
        next = Math.min(2 * eventCount, next + burstStatementRows)
        await insertTasks(db, first, next - first, withWrites)
      }
    }))
    const written = now()
    await delaysOf(receiver, withWrites)
    const withWritesFinished = Math.max(...[...withWrites.keys()].map(id => receiver.taskArrivals.get(id)!))
    const duplicates = receiver.total - receiver.arrivals.size
    const { rows: failures } = await db.query<{ error: string, n: number }>(
      'select error, count(*)::int as n from public.webhook_attempts where error is not null group by error order by n desc limit 5',
    )
    for (const failure of failures) console.log(`  failed attempts: ${failure.n} × ${failure.error}`)
    console.log(`  ${processes} process(es), the burst: ${cpuPerEvent(cpuBefore, cpuAfter, eventCount)}`)
    if (profileDir) console.log(`  ${processes} process(es): burst on the profiles' clock: ${monotonicMicros(started)} to ${monotonicMicros(finished)} µs`)
    console.log(`  ${processes} process(es): the burst's statement took ${((started - writeStarted) / 1000).toFixed(1)} s, its last delivery came ${((finished - started) / 1000).toFixed(2)} s after its commit; the burst with writes: writes took ${((written - withWritesStarted) / 1000).toFixed(1)} s, last delivery ${((withWritesFinished - withWritesStarted) / 1000).toFixed(1)} s after the first write`)
    return {
      label: `${processes} app process${processes > 1 ? 'es' : ''}`,
      bareBefore: bareBefore.perSecond,
      bareAfter: bareAfter.perSecond,
      bareOutbox: outbox.perSecond,
      bareOutboxHeld: heldOutbox.perSecond,
      perSecond: eventCount / ((finished - started) / 1000),
      withWritesPerSecond: eventCount / ((withWritesFinished - withWritesStarted) / 1000),
      p50: percentile(steadyDelays, 0.5),
      p99: percentile(steadyDelays, 0.99),
      burstP50: percentile(burstDelays, 0.5),
      burstP99: percentile(burstDelays, 0.99),
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

/** The bench team's signing secret (base64 after `whsec_`), as seeded. */
const secret = 'whsec_YmVuY2gtc2VjcmV0LWJlbmNoLXNlY3JldC1iZW5jaC1zZWNyZXQ='

/**
 * What both bare senders share (source text for a process of its own): `post(url, id, body)` sends
 * one POST with the headers the app sends, signed as the app signs (Standard Webhooks: an HMAC of
 * id, timestamp and body per request, so that a receiver could verify it), on keep-alive
 * connections, and answers the status code.
 */
const senderCommon = `
import { Agent, request } from 'node:http'
import { createHmac } from 'node:crypto'
const agent = new Agent({ keepAlive: true })
const key = Buffer.from(${JSON.stringify(secret.slice('whsec_'.length))}, 'base64')
const post = (url, id, body) => new Promise((done, fail) => {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = 'v1,' + createHmac('sha256', key).update(id + '.' + timestamp + '.' + body).digest('base64')
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'team-workspace-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signature,
    'content-length': String(Buffer.byteLength(body)),
  }
  const req = request(url, { method: 'POST', agent, headers }, (res) => {
    res.resume()
    res.on('end', () => done(res.statusCode))
  })
  req.on('error', fail)
  req.end(body)
})
`

/**
 * The bare sender: `count` POSTs of `body` to `url`, 10 in flight on kept connections, no outbox,
 * no database. Prints the seconds it took and the CPU seconds it used.
 */
const bareSender = `${senderCommon}
const [url, count, body, warm] = [new URL(process.argv[1]), Number(process.argv[2]), process.argv[3], Number(process.argv[4])]
let next = 0
const send = (until) => Promise.all(Array.from({ length: 10 }, async () => {
  while (next < until) await post(url, 'bare-' + next++, body)
}))
// unmeasured first, as the app's sender is warmed by a burst of its own
await send(warm)
const started = performance.now()
const cpu = process.cpuUsage()
await send(warm + count)
const used = process.cpuUsage(cpu)
console.log(JSON.stringify({ seconds: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6 }))
agent.destroy()
`

/**
 * The bare outbox: the least a sender that keeps its events in Postgres does (a relay of its own
 * outbox table, bench_outbox). It claims due rows 100 at a time (rows read `FOR UPDATE SKIP
 * LOCKED`, so that several relays could share the table; the next batch claimed while the queue
 * still holds one), posts each, 10 in flight on kept connections, and records each batch's answers
 * in one statement (an attempt row each, and the delivery marked succeeded). No receivers to share
 * out, no retries, no hold, no metrics. Two ways to claim (argv[3]):
 * - `update`, as the app does: one UPDATE ... RETURNING marks the rows claimed and commits, so
 *   each delivery's row is written twice (claimed, then recorded) and no transaction stays open
 *   while sending;
 * - `held`: the claim's transaction stays open while its batch is sent, its row locks keeping
 *   other relays off, and the record commits it: one write per delivery (a transaction open as
 *   long as its slowest POST; the app cannot do this on the embedded database, which has one
 *   session for everything).
 * Delivers the `warm` rows queued before it starts, prints "warm", and on "go" (a line on stdin,
 * once the measured rows are queued) delivers those and prints the seconds until the last answer
 * and the CPU seconds it used (its records included).
 */
const bareOutboxSender = `${senderCommon}
import pg from 'pg'
import { createInterface } from 'node:readline'
const [url, databaseUrl, mode] = [new URL(process.argv[1]), process.argv[2], process.argv[3]]
const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 })
const dueSql = \`select id from bench_outbox where status = 'pending' and next_attempt_at <= now()
  order by next_attempt_at limit 100 for update skip locked\`
const claimSql = \`update bench_outbox o set status = 'delivering', locked_until = now() + interval '35 seconds', updated_at = now()
  from (\${dueSql}) due where o.id = due.id returning o.id, o.body\`
const heldClaimSql = dueSql.replace('select id from', 'select id, body from')
const recordSql = \`with r as (select * from unnest($1::uuid[], $2::int[], $3::int[]) as r(id, status_code, duration_ms)),
  a as (insert into bench_outbox_attempts (delivery_id, attempt, status_code, duration_ms)
        select r.id, 1, r.status_code, r.duration_ms from r)
  update bench_outbox o set status = 'succeeded', attempts = o.attempts + 1, last_status_code = r.status_code,
    locked_until = null, updated_at = now()
  from r where o.id = r.id\`
const recordArgs = answers => [answers.map(a => a.id), answers.map(a => a.status), answers.map(a => a.ms)]
/** A batch of due rows, and what records their answers. */
async function claim() {
  if (mode !== 'held') {
    const { rows } = await pool.query(claimSql)
    return { rows, finish: async (answers) => {
      if (answers.length) await pool.query(recordSql, recordArgs(answers))
    } }
  }
  const client = await pool.connect()
  try {
    await client.query('begin')
    const { rows } = await client.query(heldClaimSql)
    return {
      rows,
      finish: async (answers) => {
        if (answers.length) await client.query(recordSql, recordArgs(answers))
        await client.query('commit')
        client.release()
      },
    }
  }
  catch (error) {
    client.release(error)
    throw error
  }
}
async function drain() {
  const queue = []
  const records = []
  let claiming = false
  let exhausted = false
  let wakeups = []
  const refill = () => {
    if (claiming || exhausted || queue.length > 100) return
    claiming = true
    claim().then(({ rows, finish }) => {
      claiming = false
      if (!rows.length) {
        exhausted = true
        records.push(finish([]))
      }
      else {
        const batch = { left: rows.length, answers: [], finish }
        for (const row of rows) queue.push({ row, batch })
      }
      for (const wake of wakeups.splice(0)) wake()
      refill()
    }).catch((error) => {
      console.error(error)
      process.exit(1)
    })
  }
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (true) {
      refill()
      const next = queue.shift()
      if (!next) {
        if (exhausted) return
        await new Promise(wake => wakeups.push(wake))
        continue
      }
      const { row, batch } = next
      const started = performance.now()
      const status = await post(url, row.id, row.body)
      batch.answers.push({ id: row.id, status, ms: Math.round(performance.now() - started) })
      if (--batch.left === 0) records.push(batch.finish(batch.answers))
    }
  }))
  const lastAnswer = performance.now()
  await Promise.all(records)
  return lastAnswer
}
await drain()
console.log('warm')
const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  if (line !== 'go') continue
  const started = performance.now()
  const cpu = process.cpuUsage()
  const lastAnswer = await drain()
  const used = process.cpuUsage(cpu)
  console.log(JSON.stringify({ seconds: (lastAnswer - started) / 1000, cpu: (used.user + used.system) / 1e6 }))
  break
}
lines.close()
await pool.end()
agent.destroy()
`

/** A sender process running `source` with `args`; `onLine` sees each line it prints. Resolves with its last line once it has exited. */
function runSender(name: string, source: string, args: string[], onLine: (line: string, stdin: NodeJS.WritableStream) => void = () => {}): { pid: number, output: Promise<string> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', source, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  const output = new Promise<string>((done, fail) => {
    let text = ''
    let last = ''
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString()
      const lines = text.split('\n')
      text = lines.pop()!
      for (const line of lines) {
        last = line
        onLine(line, child.stdin)
      }
    })
    child.on('error', fail)
    child.on('exit', code => (code === 0 ? done(last) : fail(new Error(`The ${name} exited with ${code}`))))
  })
  return { pid: child.pid!, output }
}

/** A record's body, as the app sends for tasks.created. */
function recordBody(title: string): string {
  const at = new Date().toISOString()
  return JSON.stringify({
    type: 'tasks.created',
    timestamp: at,
    data: { id: '00000000-0000-4000-8000-000000000000', title, status: 'todo', team_id: ids.team, due_date: null, priority: 3, created_at: at, created_by: ids.user, project_id: null, updated_at: at, assignee_id: null, completed_at: null },
  })
}

/**
 * The bare baseline: the same number of POSTs, with a record's body and the headers the app sends
 * (signed per POST), straight to the receiver from a sender process of its own (as real senders
 * are), 10 in flight on kept connections: no outbox, no database.
 */
async function bare(): Promise<{ perSecond: number }> {
  const receiver = await startReceiver()
  const cpuBefore = cpuSeconds([])
  const output = await runSender('bare sender', bareSender, [receiver.url, String(eventCount), recordBody('Burst 0'), String(warmEvents)]).output
  const sender = JSON.parse(output) as { seconds: number, cpu: number }
  const receiverCpu = ((cpuSeconds([]).bench - cpuBefore.bench) * 1000) / (eventCount + warmEvents)
  console.log(`  bare: CPU per event: sender ${((sender.cpu * 1000) / eventCount).toFixed(3)} ms, this process (receiver) ${receiverCpu.toFixed(3)} ms`)
  await receiver.close()
  return { perSecond: eventCount / sender.seconds }
}

/** The bare outbox's tables, on the run's database. */
async function createBareOutbox(db: pg.Pool) {
  await db.query(`create table bench_outbox (
    id uuid primary key default gen_random_uuid(), body text not null, status text not null default 'pending',
    attempts int not null default 0, last_status_code int, next_attempt_at timestamptz not null default now(),
    locked_until timestamptz, created_at timestamptz not null default now(), updated_at timestamptz not null default now())`)
  await db.query(`create index on bench_outbox (next_attempt_at) where status = 'pending'`)
  await db.query(`create table bench_outbox_attempts (
    id uuid primary key default gen_random_uuid(), delivery_id uuid not null, attempt int not null,
    status_code int, duration_ms int, created_at timestamptz not null default now())`)
  await db.query('create index on bench_outbox_attempts (delivery_id, attempt)')
}

/**
 * The bare outbox baseline (see bareOutboxSender) claiming one `way`, on the run's database (its
 * tables made by createBareOutbox), warmed as the app is: the same number of events, queued in one
 * statement, delivered to a receiver of its own.
 */
async function bareOutbox(db: pg.Pool, databaseUrl: string, way: 'update' | 'held'): Promise<{ perSecond: number }> {
  const queue = (count: number) => db.query(`insert into bench_outbox (body) select $1 from generate_series(1, $2::int)`, [recordBody('Burst 0'), count])
  const receiver = await startReceiver()
  try {
    await queue(warmEvents)
    let cpuBefore: ReturnType<typeof cpuSeconds> | undefined
    const sender = runSender('bare outbox', bareOutboxSender, [receiver.url, databaseUrl, way], (line, stdin) => {
      if (line !== 'warm') return
      void queue(eventCount).then(() => {
        cpuBefore = cpuSeconds([])
        stdin.write('go\n')
      })
    })
    const result = JSON.parse(await sender.output) as { seconds: number, cpu: number }
    const cpuAfter = cpuSeconds([])
    const ms = (key: 'postgres' | 'bench') => (((cpuAfter[key] - cpuBefore![key]) * 1000) / eventCount).toFixed(3)
    console.log(`  bare outbox (${way}): CPU per event: Postgres ${ms('postgres')} ms, sender ${((result.cpu * 1000) / eventCount).toFixed(3)} ms, this process (receiver) ${ms('bench')} ms`)
    return { perSecond: eventCount / result.seconds }
  }
  finally {
    await receiver.close()
  }
}

async function main() {
  console.log(`bench:webhooks — steady ${steadyRate} writes/s for ${steadySeconds} s, then a burst of ${eventCount} task inserts; worker poll ${pollMs} ms, ${availableParallelism()} cores, load average before: ${loadavg().map(n => n.toFixed(2)).join(' ')}`)
  const results = [await run(1), await run(2)]
  const ms = (value: number) => `${value.toFixed(0)} ms`
  /** the bare rate a run is compared with: the mean of the bare sender's rates around its burst */
  const bareOf = (result: Result) => (result.bareBefore + result.bareAfter) / 2
  console.log('')
  console.log('| Run | Steady p50 | Steady p99 | Bare POSTs/s (before, after) | Burst events/s | vs bare | Burst p50 | Burst p99 | With writes events/s | vs bare | Bare outbox events/s | Bare outbox vs bare | Burst vs bare outbox | Bare outbox, claims held: events/s | vs bare | Duplicates |')
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
  for (const result of results) {
    const baseline = bareOf(result)
    console.log(`| ${result.label} | ${ms(result.p50)} | ${ms(result.p99)} | ${baseline.toFixed(0)} (${result.bareBefore.toFixed(0)}, ${result.bareAfter.toFixed(0)}) | ${result.perSecond.toFixed(0)} | ${(result.perSecond / baseline).toFixed(2)} | ${ms(result.burstP50)} | ${ms(result.burstP99)} | ${result.withWritesPerSecond.toFixed(0)} | ${(result.withWritesPerSecond / baseline).toFixed(2)} | ${result.bareOutbox.toFixed(0)} | ${(result.bareOutbox / baseline).toFixed(2)} | ${(result.perSecond / result.bareOutbox).toFixed(2)} | ${result.bareOutboxHeld.toFixed(0)} | ${(result.bareOutboxHeld / baseline).toFixed(2)} | ${result.duplicates} |`)
  }
  const targets = results.map(result => `${result.label}: p50 ${result.p50 <= 50 ? 'met' : 'MISSED'}, p99 ${result.p99 <= 500 ? 'met' : 'MISSED'}, burst ${result.perSecond / bareOf(result) >= 0.5 ? 'met' : 'MISSED'}`)
  console.log(`\nTargets (steady p50 <= 50 ms, p99 <= 500 ms; burst >= 0.5 of bare): ${targets.join('; ')}`)
  console.log(`Two processes / one process: ${(results[1]!.perSecond / results[0]!.perSecond).toFixed(2)}; load average after: ${loadavg().map(n => n.toFixed(2)).join(' ')}`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
