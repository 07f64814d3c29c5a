// npm run bench:api — the public API against bare node:http + pg handlers running the same SQL, in
// one run on one fresh Postgres database (rate limiting on in the app, with a limit never reached):
//   read:  GET /api/v1/tasks?limit=50 (key auth, joined names) against the list SQL alone;
//   write: POST /api/v1/tasks (key auth, validation, same-team reference check, activity entry)
//          against a plain prepared INSERT giving the same answer: one statement that sets the
//          audit context (so the activity entry is the same), inserts and answers the row with the
//          list's joined names; and, as a second figure, against the app's own INSERT statement
//          run bare (which also checks project_id against the team); and, for contrast, a plain
//          INSERT that answers the row alone;
//   recording: the same build with the API log off (API_LOG=off, a second app process on the
//          same database) in the same read and write rounds: what recording every request costs;
// Each bare handler is measured as pg runs a statement by default (parsed and planned each time),
// with the statement prepared per connection (as the app keeps its own), and prepared after the
// app's key statement (look-up and rate count): the most a design with a key statement can reach.
//   floor: GET /api/health (one `select 1`, no key) against a bare handler running `select 1`: what
//          Nitro and h3 cost around any request, beside the work;
//   deep:  in a team of 1,000,000 tasks, the cursor page near the last row against the first page
//          (and, for contrast, the same page by offset).
//   database only: the same statements from this process over a pg pool, no HTTP and no app, to show
//          what checking and counting the key in Postgres on every request costs the database
//          itself: the work statement alone; the key statement, then the work (as the app runs
//          them); both sent at once on one connection (pg's pipeline mode: one round trip, two
//          transactions); and both as one statement (one transaction, which holds the key's counter
//          row until it commits).
// The targets take turns within each round. Prints each target's best round (requests per second,
// p50/p99 latency), each ratio as the median of its ratios within a round, and the machine's load.
//
// Needs a built app (`npm run build`; APP_BUILD_DIR is honoured) and a Postgres server:
// BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
// BENCH_SECONDS (default 5 per round), BENCH_ROUNDS (default 5), BENCH_CONNECTIONS (default 16) and
// BENCH_DEEP_ROWS (default 1,000,000) tune the run. BENCH_PROFILE=<folder> writes V8 CPU profiles there;
// BENCH_KEEP_DATABASE=1 keeps the database afterwards (to EXPLAIN its queries). BENCH_ALSO=<build
// folder>[,<build folder>…] starts other builds of the app (each an APP_BUILD_DIR, e.g. of another
// commit) on the same database and measures them in the read and write rounds beside this one, to
// compare two versions of the code under the same load. BENCH_ONLY=read or write runs that
// comparison alone (the prepared bare handler, the app, the app with the API log off and BENCH_ALSO's
// builds); with BENCH_PROFILE, the log-off process writes its profile into <folder>/log-off.
// BENCH_BACKENDS=1 (with BENCH_ONLY) splits the Postgres CPU of each target's rounds by whom it
// served (each process's connections carry its name; the rest by kind: WAL writer, autovacuum...)
// and gives each the time it was ready to run but waited for a core, with the server's own wait;
// BENCH_PERF=<folder> (with BENCH_BACKENDS) also samples the Postgres processes serving each target
// in each round with `perf record -e cpu-clock` (if perf is installed) into <folder>/<target>-<round>.data,
// to read with `perf report -i <file> --sort sym`. BENCH_SYSCALLS=1 (with BENCH_BACKENDS) counts the
// system calls of each target's server and of its Postgres processes per request, by call (perf stat).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import http from 'node:http'
import pg from 'pg'
import { postgresCpuMs, postgresSchedules, processCpuMs, processSchedule, type Schedule } from './bench-cpu'
import { benchDatabase } from './harness/bench-database'
import { startApp, startProcess, type StartOptions, type TestApp } from './harness/app'
import { freePort } from './harness/ports'
import { generateApiKey, hashApiKey, keyIsValidSql } from '../server/utils/credentials/api-keys'
import { createDatabase } from '../server/utils/db/db-drivers'
import { auditContextValues, auditedWriteSql } from '../server/utils/db/audited-client'
import { announceEventsSql, announcer } from '../server/utils/changes/announce'
import { countRequestSql } from '../server/utils/credentials/rate-limits'
import { insertStatement, joinedNames, listRecordsSql, recordSelectTemplate } from '../server/utils/records/record-sql'
import { readCatalog, type TableInfo } from '../server/utils/records/table-registry'

// The statement an earlier design ran on every request (the key's look-up and its rate count in
// one), kept here for the "bare + key statement" and database-only contrasts: the app now verifies
// known keys from memory and counts from leased blocks, so most requests run neither.
const keyStatementSql = `with relaxed as materialized (select set_config('synchronous_commit', 'off', true)),
  k as (select a.* from public.api_keys a cross join relaxed where a.key_hash = $1),
  counted as (${countRequestSql(`'key:' || k.id`, `k where ${keyIsValidSql('k')}`, '$2::int')})
  select k.id, k.team_id, k.created_by, k.scopes, k.revoked_at is not null as revoked,
    coalesce(k.last_used_at > now() - interval '1 minute', false) as recently_used,
    counted.count as rate_count, counted.reset as rate_reset
  from k left join counted on true`

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const warmSeconds = Number(process.env.BENCH_WARM_SECONDS ?? 1)
const taskCount = 10_000
const deepRows = Number(process.env.BENCH_DEEP_ROWS ?? 1_000_000)
const path = '/api/v1/tasks?limit=50'
const ids = {
  user: '00000000-0000-4000-8000-00000000b001',
  member: '00000000-0000-4000-8000-00000000b002',
  team: '00000000-0000-4000-8000-00000000b010',
  project: '00000000-0000-4000-8000-00000000b100',
  deepTeam: '00000000-0000-4000-8000-00000000b020',
}
const newTask = { title: 'Benchmark write', priority: 2, project_id: ids.project }

/** The app's catalog of tables, read over a pg pool. */
function catalogOf(pool: pg.Pool): Promise<Map<string, TableInfo>> {
  return readCatalog({
    query: async (text, params) => {
      const result = await pool.query(text, params)
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    },
    exec: async (sql) => {
      await pool.query(sql)
    },
  })
}

/**
 * The bare handlers: node:http + pg, no auth, no framework. GET runs the app's list SQL for tasks;
 * POST parses the body and runs one INSERT that sets the audit context the activity trigger reads.
 */
async function runMinimalServer(databaseUrl: string, port: number, apiKeyId: string, apiKey: string) {
  // the same type parsers as the app (server/utils/db/db-drivers.ts)
  pg.types.setTypeParser(20, value => Number(value))
  pg.types.setTypeParser(1082, value => value)
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })
  const catalog = await catalogOf(pool)
  const listSql = listRecordsSql(catalog.get('tasks')!, catalog)
  const insertSql = `with audit_context as materialized (select set_config('app.actor_id', $6, true), set_config('app.team_id', $7, true),
      set_config('app.source', 'api', true), set_config('app.api_key_id', $8, true), set_config('app.notify_after_commit', 'on', true))
    insert into public.tasks (team_id, created_by, title, priority, project_id) select $1, $2, $3, $4, $5 from audit_context returning *`
  // ?joined: the plain INSERT answering what the app answers, the row with its joined names
  const joinedInsertSql = `${insertSql.replace(/\n\s+insert into /, ', inserted as (insert into ').replace(/returning \*$/, 'returning *)')}
    ${recordSelectTemplate(catalog.get('tasks')!, catalog).replace('%SOURCE%', 'inserted')}`
  const context = auditContextValues({ actorId: ids.user, teamId: ids.team, source: 'api', apiKeyId })
  // Every INSERT here says, as the app's do (app.notify_after_commit), that the change feed's
  // notification comes after its commit, and is announced as the app announces its own, so that
  // listeners hear of these writes as they hear of the app's, for the same work in the database.
  const announce = announcer(() => pool.query(announceEventsSql).catch(() => {}))
  http.createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    // ?prepared: the same statement, kept prepared on each connection as the app does
    const prepared = url.searchParams.has('prepared')
    // ?keyed: the app's key statement first (look-up and rate count), to show what it costs
    if (url.searchParams.has('keyed')) await pool.query({ text: keyStatementSql, values: [hashApiKey(apiKey), 60], name: prepared ? 'key' : undefined })
    if (request.method === 'POST') {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof newTask
      const joined = url.searchParams.has('joined')
      let query = { text: joined ? joinedInsertSql : insertSql, values: [ids.team, ids.user, body.title, body.priority, body.project_id, ids.user, ids.team, apiKeyId], name: prepared ? (joined ? 'joined-insert' : 'insert') : undefined }
      // ?same: the app's own statement (the same-team check of project_id, the joined names), no
      // validation; built per request as the app builds it, which costs this handler a little too
      if (url.searchParams.has('same')) {
        const statement = await insertStatement(catalog.get('tasks')!, ids.team, ids.user, body, true, catalog)
        query = { text: auditedWriteSql(statement.sql, statement.params.length), values: [...statement.params, ...context], name: prepared ? 'app-insert' : undefined }
      }
      const { rows } = await pool.query(query)
      announce()
      response.writeHead(201, { 'content-type': 'application/json' })
      response.end(JSON.stringify(rows[0]))
      return
    }
    // ?health: what the app's GET /api/health does (one `select 1`), the floor of a request
    if (url.searchParams.has('health')) {
      await pool.query('select 1')
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ ok: true }))
      return
    }
    const limit = Number(url.searchParams.get('limit') ?? 50)
    const { rows } = await pool.query({ text: listSql, values: [ids.team, limit, 0], name: prepared ? 'list' : undefined })
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(rows))
  }).listen(port, '127.0.0.1')
  process.on('SIGTERM', () => process.exit(0))
}

/** Seeds both teams and a key for each; answers the keys and the bench team key's id. */
async function seed(databaseUrl: string): Promise<{ key: string, keyId: string, deepKey: string }> {
  const db = createDatabase({ url: databaseUrl, max: 1 })
  const keys = [generateApiKey(), generateApiKey()]
  let keyId = ''
  await db.transaction(async (tx) => {
    await tx.query(`insert into auth.users (id, email) values ($1, 'bench@example.com'), ($2, 'member@example.com')`, [ids.user, ids.member])
    await tx.query(`insert into public.profiles (id, email, name) values ($1, 'bench@example.com', 'Bea Bench'), ($2, 'member@example.com', 'Mo Member')`, [ids.user, ids.member])
    await tx.query(`insert into public.teams (id, name) values ($1, 'Bench Team'), ($2, 'Deep Team')`, [ids.team, ids.deepTeam])
    await tx.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'owner'), ($1, $3, 'member'), ($4, $2, 'owner')`, [ids.team, ids.user, ids.member, ids.deepTeam])
    await tx.query(`insert into public.projects (id, team_id, created_by, name) values ($1, $2, $3, 'Benchmark')`, [ids.project, ids.team, ids.user])
    // the rows are data to read, not changes to log: the triggers stay off while seeding
    await tx.query(`set local session_replication_role = replica`)
    const insertTasks = `insert into public.tasks (team_id, created_by, title, status, priority, project_id, assignee_id, due_date, created_at)
       select $1, $2, 'Task ' || i, (array['todo', 'in_progress'])[1 + i % 2], 1 + i % 5,
              case when i % 3 = 0 then null else $3::uuid end, case when i % 2 = 0 then $4::uuid end,
              current_date + (i % 60), now() - make_interval(secs => i)
       from generate_series(1, $5::int) i`
    await tx.query(insertTasks, [ids.team, ids.user, ids.project, ids.member, taskCount])
    await tx.query(insertTasks, [ids.deepTeam, ids.user, null, null, deepRows])
    await tx.query(`set local session_replication_role = origin`)
    for (const [i, team] of [ids.team, ids.deepTeam].entries()) {
      const { rows } = await tx.query<{ id: string }>(
        `insert into public.api_keys (team_id, created_by, name, key_prefix, key_hash) values ($1, $2, 'bench', $3, $4) returning id`,
        [team, ids.user, keys[i]!.prefix, keys[i]!.hash],
      )
      if (i === 0) keyId = rows[0]!.id
    }
  })
  // vacuum now, so autovacuum of the fresh rows and a checkpoint do not run during the measurements
  await db.exec('vacuum (analyze)')
  await db.exec('checkpoint')
  await db.close()
  return { key: keys[0]!.key, keyId, deepKey: keys[1]!.key }
}

/**
 * BENCH_STREAMS=<n>: n change streams (`/api/v1/events/stream`) held open on the app during the
 * rounds, 10 a key (the most a key may hold), in the deep team: open subscribers that the
 * benchmark's writes (in the other team) do not concern, so what they cost is their being open.
 * Answers a function that closes them.
 */
async function openEventStreams(databaseUrl: string, appPort: number, count: number): Promise<() => void> {
  const db = createDatabase({ url: databaseUrl, max: 1 })
  const keys = Array.from({ length: Math.ceil(count / 10) }, () => generateApiKey())
  for (const key of keys) {
    await db.query(`insert into public.api_keys (team_id, created_by, name, key_prefix, key_hash) values ($1, $2, 'bench stream', $3, $4)`,
      [ids.deepTeam, ids.user, key.prefix, key.hash])
  }
  await db.close()
  const requests: http.ClientRequest[] = []
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
  await Promise.all(Array.from({ length: count }, (_, i) => new Promise<void>((resolveOpen, reject) => {
    const request = http.get(`http://127.0.0.1:${appPort}/api/v1/events/stream`,
      { agent, headers: { authorization: `Bearer ${keys[Math.floor(i / 10)]!.key}`, accept: 'text/event-stream' } }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`An event stream answered ${response.statusCode}`))
        response.resume()
        resolveOpen()
      })
    request.on('error', error => reject(error))
    requests.push(request)
  })))
  console.info(`[bench] ${count} event streams open on the app (another team's: the writes do not concern them)`)
  return () => {
    for (const request of requests) request.destroy()
    agent.destroy()
  }
}

interface Result {
  requests: number
  rps: number
  p50: number
  p99: number
  errors: number
  cpuMs?: number
  /** the Postgres server's CPU per request (ms) in the same time */
  postgresMs?: number
  /** BENCH_BACKENDS: the server's schedule per request, and Postgres's by whom its processes served */
  schedules?: Map<string, Schedule>
  /** BENCH_SYSCALLS: system calls per request, by call, of the server ("server: writev") and its backends ("postgres: ...") */
  syscalls?: Map<string, number>
}

/** The system calls BENCH_SYSCALLS counts one by one (raw_syscalls:sys_enter counts them all). */
const countedCalls = ['read', 'write', 'writev', 'recvfrom', 'sendto', 'epoll_wait', 'epoll_pwait', 'epoll_ctl', 'futex', 'kill', 'poll', 'select', 'pread64', 'pwrite64', 'fdatasync', 'lseek', 'getpid']

/**
 * Starts `perf` with `args` (it attaches before the round starts); answers a function that stops
 * it with SIGINT, as perf expects, and waits until it has written its output.
 */
async function runPerf(args: string[]): Promise<() => Promise<void>> {
  const perf = spawn('perf', args, { stdio: 'ignore' })
  await new Promise(r => setTimeout(r, 300))
  return () => new Promise<void>((done) => {
    perf.once('exit', () => done())
    perf.kill('SIGINT')
  })
}

/** BENCH_SYSCALLS: counts the system calls of `pids` until the answered function is called; it answers the counts. */
async function countSyscalls(pids: number[]): Promise<() => Promise<Map<string, number>>> {
  const file = resolve(process.env.TMPDIR ?? '/tmp', `bench-syscalls-${process.pid}-${pids[0]}.csv`)
  const events = ['raw_syscalls:sys_enter', ...countedCalls.map(call => `syscalls:sys_enter_${call}`)]
  const stop = await runPerf(['stat', '-x', ',', '-o', file, '-e', events.join(','), '-p', pids.join(',')])
  return async () => {
    await stop()
    const counts = new Map<string, number>()
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const [value, , event] = line.split(',')
      if (!event || !/^\d+$/.test(value ?? '')) continue
      counts.set(event.replace(/^raw_syscalls:sys_enter$/, 'all').replace(/^syscalls:sys_enter_/, ''), Number(value))
    }
    return counts
  }
}

/** BENCH_BACKENDS: a connection to the bench's database that names each Postgres process. */
let backendNamer: pg.Client | undefined
/** The name each server process gives its Postgres connections (PGAPPNAME), by the server's pid. */
const connectionNames = new Map<number, string>()
const perfRounds = new Map<string, number>()

let perfFound: boolean | undefined
/** Whether `perf` runs here (BENCH_PERF and BENCH_SYSCALLS do nothing without it). */
const hasPerf = () => (perfFound ??= spawnSync('perf', ['--version']).status === 0)

/** The Postgres processes serving the server `pid` (by their connections' name). */
async function backendsOf(pid: number): Promise<number[]> {
  const name = connectionNames.get(pid)
  return [...(await backendNames())].filter(([, label]) => label === name).map(([backend]) => backend)
}

/**
 * BENCH_PERF: starts sampling the Postgres processes that serve the server `pid` (by their
 * connections' name); answers a function that stops it and waits for the file to be written.
 */
async function startPerf(pid: number | undefined): Promise<(() => Promise<void>) | undefined> {
  const folder = process.env.BENCH_PERF
  const name = pid === undefined ? undefined : connectionNames.get(pid)
  if (!folder || !backendNamer || !name || !hasPerf()) return undefined
  const pids = await backendsOf(pid!)
  if (!pids.length) return undefined
  const round = (perfRounds.get(name) ?? 0) + 1
  perfRounds.set(name, round)
  return runPerf(['record', '-q', '-e', 'cpu-clock', '-F', '2000', '-p', pids.join(','), '-o', resolve(folder, `${name.replace(/[^a-z0-9]+/gi, '-')}-${round}.data`)])
}

/** Each Postgres process's name: its connection's application_name, else its kind (walwriter...). */
async function backendNames(): Promise<Map<number, string>> {
  const { rows } = await backendNamer!.query<{ pid: number, label: string }>(
    `select pid, coalesce(nullif(application_name, ''), backend_type) as label from pg_stat_activity`)
  return new Map(rows.map(row => [row.pid, row.label]))
}

/** The schedules between two snapshots per request, Postgres's summed by name, the server's as "server". */
async function schedulesPerRequest(server: [Schedule | undefined, Schedule | undefined], before: Map<number, Schedule>, after: Map<number, Schedule>, requests: number): Promise<Map<string, Schedule>> {
  const names = await backendNames()
  const sums = new Map<string, Schedule>()
  const add = (label: string, cpuMs: number, waitMs: number) => {
    const sum = sums.get(label) ?? { cpuMs: 0, waitMs: 0 }
    sum.cpuMs += cpuMs / requests
    sum.waitMs += waitMs / requests
    sums.set(label, sum)
  }
  if (server[0] && server[1]) add('server (Node)', server[1].cpuMs - server[0].cpuMs, server[1].waitMs - server[0].waitMs)
  for (const [pid, end] of after) {
    const start = before.get(pid) ?? { cpuMs: 0, waitMs: 0 }
    add(`postgres: ${names.get(pid) ?? 'postmaster, logger and others'}`, end.cpuMs - start.cpuMs, end.waitMs - start.waitMs)
  }
  return sums
}

/** A request to load, and the server process answering it (for its CPU time per request). */
interface Target { url: string, headers: Record<string, string>, body?: string, pid?: number }

/** Keeps `connections` keep-alive requests in flight for `duration` seconds and measures each 2xx. */
async function load(target: Target, duration: number, measured = false): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const latencies: number[] = []
  let errors = 0
  const deadline = performance.now() + duration * 1000
  const headers = target.body === undefined ? target.headers : { ...target.headers, 'content-type': 'application/json' }
  const once = () => new Promise<void>((done) => {
    const started = performance.now()
    const request = http.request(target.url, { agent, headers, method: target.body === undefined ? 'GET' : 'POST' }, (response) => {
      response.resume()
      response.on('end', () => {
        if (response.statusCode! >= 200 && response.statusCode! < 300) latencies.push(performance.now() - started)
        else errors++
        done()
      })
    })
    request.on('error', () => {
      errors++
      done()
    })
    request.end(target.body)
  })
  const worker = async () => {
    while (performance.now() < deadline) await once()
  }
  const stopPerf = measured ? await startPerf(target.pid) : undefined
  const stopCounts = measured && process.env.BENCH_SYSCALLS && backendNamer && target.pid !== undefined && hasPerf()
    ? await Promise.all([countSyscalls([target.pid]), countSyscalls(await backendsOf(target.pid))])
    : undefined
  const began = performance.now()
  const cpuBefore = processCpuMs(target.pid)
  const postgresBefore = postgresCpuMs()
  const schedulesBefore = backendNamer ? [processSchedule(target.pid), postgresSchedules()] as const : undefined
  await Promise.all(Array.from({ length: connections }, worker))
  const elapsed = (performance.now() - began) / 1000
  const cpuAfter = processCpuMs(target.pid)
  const postgresAfter = postgresCpuMs()
  const schedules = schedulesBefore
    ? await schedulesPerRequest([schedulesBefore[0], processSchedule(target.pid)], schedulesBefore[1], postgresSchedules(), Math.max(1, latencies.length + errors))
    : undefined
  await stopPerf?.()
  let syscalls: Map<string, number> | undefined
  if (stopCounts) {
    const [server, backends] = await Promise.all(stopCounts.map(stop => stop()))
    const requests = Math.max(1, latencies.length + errors)
    syscalls = new Map([...[...server!].map(([call, n]): [string, number] => [`server: ${call}`, n / requests]), ...[...backends!].map(([call, n]): [string, number] => [`postgres: ${call}`, n / requests])])
  }
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
  const perRequest = (before?: number, after?: number) => before === undefined || after === undefined ? undefined : (after - before) / Math.max(1, latencies.length + errors)
  return { requests: latencies.length, rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors, cpuMs: perRequest(cpuBefore, cpuAfter), postgresMs: perRequest(postgresBefore, postgresAfter), schedules, syscalls }
}

/** Sends `count` requests one after the other (for pages too slow to load in parallel). */
async function timedOneByOne(target: Target, count: number): Promise<Result> {
  const latencies: number[] = []
  const began = performance.now()
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    const response = await fetch(target.url, { headers: target.headers })
    await response.arrayBuffer()
    if (response.ok) latencies.push(performance.now() - started)
  }
  latencies.sort((a, b) => a - b)
  return { requests: latencies.length, rps: latencies.length / ((performance.now() - began) / 1000), p50: latencies[Math.floor(latencies.length / 2)] ?? Number.NaN, p99: latencies.at(-1) ?? Number.NaN, errors: count - latencies.length }
}

const row = (label: string, r: Result) =>
  `${label.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(1).padStart(7)} ms   p99 ${r.p99.toFixed(1).padStart(7)} ms   (${r.requests} ok, ${r.errors} errors)${r.cpuMs === undefined ? '' : `   server CPU ${r.cpuMs.toFixed(3)} ms/request`}${r.postgresMs === undefined ? '' : `, Postgres ${r.postgresMs.toFixed(3)} ms`}`
const best = (list: Result[]) => list.reduce((a, b) => (b.rps > a.rps ? b : a))

/** Alternates the targets over the rounds (the machine may be shared) and keeps each one's best. */
async function compare(targets: Target[]): Promise<Measured[]> {
  for (const target of targets) await load(target, 2)
  const results = targets.map(() => [] as Result[])
  for (let round = 0; round < rounds; round++) {
    for (const [i, target] of targets.entries()) {
      // each turn starts warm: a server idle for more than 10 s (the other targets' turns) has
      // had its pool's connections closed (pg's idle timeout), and a new connection loads the
      // catalog, compiles the triggers and prepares its statements again; unmeasured, as a server
      // under steady load would have done it long before
      if (warmSeconds > 0) await load(target, warmSeconds)
      results[i]!.push(await load(target, seconds, true))
    }
  }
  return results.map(list => ({ ...best(list), rounds: list }))
}

/** A target's best round, and every round. */
interface Measured extends Result { rounds: Result[] }

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/**
 * The median over the rounds of `a`'s figure over `b`'s in the same round. Each round measures
 * every target back to back, so a ratio within a round compares them under the same load; the
 * median of those is steadier on a shared machine than a ratio of two bests from different rounds.
 */
function ratio(a: Measured, b: Measured, figure: (result: Result) => number = result => result.rps): number {
  return median(a.rounds.map((round, i) => figure(round) / figure(b.rounds[i]!)))
}

/** Keeps `connections` loops of `run` going for `duration` seconds; answers runs per second. */
async function loops(run: () => Promise<unknown>, duration: number): Promise<number> {
  let done = 0
  const deadline = performance.now() + duration * 1000
  const began = performance.now()
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      await run()
      done++
    }
  }))
  return done / ((performance.now() - began) / 1000)
}

/** Runs per second (best round) of each variant, and its median ratio to `one` over the rounds. */
interface DatabaseFigures { one: number, two: number, pipelined: number, fused: number, ratios: { two: number, pipelined: number, fused: number } }

/**
 * The database-only measurement: the read and the write as the statements the app sends, run from
 * this process over pg pools of 10 connections (the app's pool size), every statement prepared.
 * `one` is the work statement alone; `two` the key statement and then the work; `pipelined` both
 * written at once on one connection (two transactions, one round trip); `fused` both in one
 * statement (one transaction: the key's counter row stays locked until it commits).
 */
async function databaseOnly(databaseUrl: string, apiKeyId: string, apiKey: string): Promise<{ read: DatabaseFigures, write: DatabaseFigures }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })
  const pipelinePool = new pg.Pool({ connectionString: databaseUrl, max: 10, pipeline: true })
  const catalog = await catalogOf(pool)
  const tasks = catalog.get('tasks')!
  const keyQuery = { text: keyStatementSql, values: [hashApiKey(apiKey), 60], name: 'key' }
  const pipelined = async (work: pg.QueryConfig) => {
    const client = await pipelinePool.connect()
    try {
      await Promise.all([client.query(keyQuery), client.query(work)])
    }
    finally {
      client.release()
    }
  }
  // the key's look-up and count, as the key statement makes them, for the fused statements
  const keyCtes = (hash: string, window: string, relaxed: boolean) =>
    `${relaxed ? `relaxed as materialized (select set_config('synchronous_commit', 'off', true)), ` : ''}`
    + `k as (select a.id from public.api_keys a${relaxed ? ' cross join relaxed' : ''} where a.key_hash = ${hash} and ${keyIsValidSql('a')}), `
    + `counted as (${countRequestSql(`'key:' || k.id`, 'k', window)})`

  // read: the list; fused, it runs first and the count comes last (a row of its own), so that the
  // counter row is locked only from the count to the commit, which needs no flush
  const listSql = listRecordsSql(tasks, catalog)
  const list = { text: listSql, values: [ids.team, 50, 0], name: 'list' }
  const answered = tasks.columns.length + joinedNames(tasks, catalog).length
  const fusedListSql = `with ${keyCtes('$4', '$5::int', true)}
    (${listSql.replace(' from public."tasks" r ', ', null::int as rate_count, null::int as rate_reset from public."tasks" r ').replace('where r.team_id = $1', 'where r.team_id = $1 and exists (select 1 from k)')})
    union all select ${Array.from({ length: answered }, () => 'null').join(', ')}, count, reset from counted`
  const fusedList = { text: fusedListSql, values: [ids.team, 50, 0, hashApiKey(apiKey), 60], name: 'fused-list' }

  // write: the app's INSERT; fused, the audit context is set only when the key is valid and under
  // its limit, so that the insert, which selects from it, happens only then
  const statement = await insertStatement(tasks, ids.team, ids.user, newTask, true, catalog)
  const insertSql = auditedWriteSql(statement.sql, statement.params.length)
  const context = auditContextValues({ actorId: ids.user, teamId: ids.team, source: 'api', apiKeyId })
  const insertValues = [...statement.params, ...context]
  const insert = { text: insertSql, values: insertValues, name: 'insert' }
  const first = insertValues.length + 1
  const gated = insertSql.replace(/^with audit_context as materialized \((select .*?, true\))\), /s, (_, select: string) =>
    `with ${keyCtes(`$${first}`, `$${first + 1}::int`, false)}, audit_context as materialized (${select} from counted where counted.count <= $${first + 2}), `)
  if (gated === insertSql) throw new Error('The write statement no longer starts with its audit context')
  const fusedInsert = { text: gated, values: [...insertValues, hashApiKey(apiKey), 60, 1_000_000_000], name: 'fused-insert' }

  const variants = {
    read: [() => pool.query(list), async () => {
      await pool.query(keyQuery)
      await pool.query(list)
    }, () => pipelined(list), () => pool.query(fusedList)],
    write: [() => pool.query(insert), async () => {
      await pool.query(keyQuery)
      await pool.query(insert)
    }, () => pipelined(insert), () => pool.query(fusedInsert)],
  }
  // each answers what the app's statements answer: check it once before measuring
  const fusedRows = (await pool.query(fusedList)).rows
  if (fusedRows.length !== 51 || fusedRows.at(-1).rate_count === null || fusedRows[0].project_name !== 'Benchmark') throw new Error('The fused read does not answer the page and the count')
  if ((await pool.query(fusedInsert)).rows[0]?.project_name !== 'Benchmark') throw new Error('The fused write inserted nothing')
  const figures = { read: [] as number[][], write: [] as number[][] }
  for (const kind of ['read', 'write'] as const) {
    for (const run of variants[kind]) await loops(run, 1)
    figures[kind] = variants[kind].map(() => [])
    for (let round = 0; round < rounds; round++) {
      for (const [i, run] of variants[kind].entries()) figures[kind][i]!.push(await loops(run, seconds))
    }
  }
  await pool.end()
  await pipelinePool.end()
  const bestOf = (list: number[][]): DatabaseFigures => {
    const [one, two, pipelined, fused] = list.map(values => Math.max(...values)) as [number, number, number, number]
    const against = (i: number) => median(list[i]!.map((value, round) => value / list[0]![round]!))
    return { one, two, pipelined, fused, ratios: { two: against(1), pipelined: against(2), fused: against(3) } }
  }
  return { read: bestOf(figures.read), write: bestOf(figures.write) }
}

/**
 * BENCH_BACKENDS: for each target, the CPU and the wait for a core per request (ms, median over the
 * rounds) of the server and of the Postgres processes by whom they served; those under 0.002 ms
 * of CPU and of wait are left out.
 */
function printSchedules(targets: [string, Measured][]) {
  console.info('\nPer request, median over the rounds: CPU / waiting for a core (ms)')
  for (const [label, measured] of targets) {
    const names = new Set(measured.rounds.flatMap(round => [...(round.schedules?.keys() ?? [])]))
    const lines: string[] = []
    let cpuTotal = 0
    let waitTotal = 0
    for (const name of [...names].sort()) {
      const cpuMs = median(measured.rounds.map(round => round.schedules?.get(name)?.cpuMs ?? 0))
      const waitMs = median(measured.rounds.map(round => round.schedules?.get(name)?.waitMs ?? 0))
      cpuTotal += cpuMs
      waitTotal += waitMs
      if (cpuMs >= 0.002 || waitMs >= 0.002) lines.push(`    ${name.padEnd(40)} ${cpuMs.toFixed(3)} / ${waitMs.toFixed(3)}`)
    }
    console.info(`  ${label}: in all ${cpuTotal.toFixed(3)} / ${waitTotal.toFixed(3)}`)
    for (const line of lines) console.info(line)
  }
  if (!process.env.BENCH_SYSCALLS) return
  console.info('\nSystem calls per request, median over the rounds')
  for (const [label, measured] of targets) {
    const names = [...new Set(measured.rounds.flatMap(round => [...(round.syscalls?.keys() ?? [])]))].sort()
    const counts = names.map(name => [name, median(measured.rounds.map(round => round.syscalls?.get(name) ?? 0))] as const).filter(([, n]) => n >= 0.01)
    console.info(`  ${label}: ${counts.map(([name, n]) => `${name} ${n.toFixed(2)}`).join(', ')}`)
  }
}

// three decimals: a ratio just under its target (0.797) would print as the target itself
const verdict = (ratio: number, target: number, atLeast = true) =>
  `${ratio.toFixed(3)} (target ${atLeast ? '>=' : '<='} ${target}) ${(atLeast ? ratio >= target : ratio <= target) ? 'OK' : 'MISSED'}`

async function main() {
  const { name, databaseUrl, drop } = await benchDatabase(serverUrl)
  const apps: TestApp[] = []
  let bareServer: ChildProcess | undefined
  const closers: (() => void)[] = []
  try {
    console.info(`[bench] database ${name}; starting the app (applies the migrations)...`)
    // an app process's settings (the app's, and BENCH_ALSO's builds'): rate limiting stays on (every
    // request is counted) with a limit the benchmark never reaches; PGAPPNAME names its connections
    // in pg_stat_activity (BENCH_BACKENDS)
    const startNamed = async (connectionName: string, env: Record<string, string> = {}, options: StartOptions = {}) => {
      const started = await startApp({ API_RATE_LIMIT: '1000000000', PGAPPNAME: connectionName, ...env }, { databaseUrl, ...options })
      connectionNames.set(started.pid, connectionName)
      apps.push(started)
      return { app: started, port: Number(new URL(started.url).port) }
    }
    const profile = (folder: string) => process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}${folder}`] : []
    const { app: appProcess, port: appPort } = await startNamed('app', {}, { nodeArgs: profile('') })
    console.info(`[bench] seeding ${taskCount.toLocaleString('en')} tasks in one team and ${deepRows.toLocaleString('en')} in another...`)
    const keys = await seed(databaseUrl)
    const minimalPort = await freePort()
    const bare = (await startProcess([...process.execArgv, ...profile('/minimal'), process.argv[1]!, '--minimal', databaseUrl, String(minimalPort), keys.keyId, keys.key],
      { ...process.env, PGAPPNAME: 'bare' }, `http://127.0.0.1:${minimalPort}/`)).child
    bareServer = bare
    connectionNames.set(bare.pid!, 'bare')

    // the same build with the API log off, on the same database
    const { app: offProcess, port: offPort } = await startNamed('app, API log off', { API_LOG: 'off' }, { nodeArgs: profile('/log-off') })
    const recordingOff = (target: Target): Target => ({ ...target, url: target.url.replace(`:${appPort}/`, `:${offPort}/`), pid: offProcess.pid })
    const joinedCheck = await fetch(`http://127.0.0.1:${minimalPort}/api/v1/tasks?joined&prepared`, { method: 'POST', body: JSON.stringify(newTask) })
    if ((await joinedCheck.json() as Record<string, unknown>).project_name !== 'Benchmark') throw new Error('The bare joined INSERT does not answer the joined names')

    const app = (url: string, key: string, body?: unknown): Target =>
      ({ url: `http://127.0.0.1:${appPort}${url}`, headers: { authorization: `Bearer ${key}` }, body: body === undefined ? undefined : JSON.stringify(body), pid: appProcess.pid })
    const minimal = (url: string, body?: unknown): Target =>
      ({ url: `http://127.0.0.1:${minimalPort}${url}`, headers: {}, body: body === undefined ? undefined : JSON.stringify(body), pid: bare.pid })
    const check = await fetch(app(path, keys.key).url, { headers: app(path, keys.key).headers })
    const body = await check.json() as Record<string, unknown>[]
    if (check.status !== 200 || body.length !== 50 || !('project_name' in body[0]!)) throw new Error(`Unexpected app answer: ${check.status}`)

    // the deep page: offset once to get its cursor from the Link header, then the cursor itself
    // (the page before the last one, so that its Link leads to the last 50 rows)
    const deepOffset = Math.max(0, deepRows - 100)
    const offsetAnswer = await fetch(app(`${path}&offset=${deepOffset}`, keys.deepKey).url, { headers: app(path, keys.deepKey).headers })
    // the Link is absolute: its path and query are what the app target takes
    const linked = offsetAnswer.headers.get('link')?.match(/<([^>]+)>/)?.[1]
    if (offsetAnswer.status !== 200 || !linked) throw new Error(`No Link from the deep offset page: ${offsetAnswer.status}`)
    const link = new URL(linked).pathname + new URL(linked).search
    const cursorAnswer = await fetch(app(link, keys.deepKey).url, { headers: app(link, keys.deepKey).headers })
    const cursorRows = await cursorAnswer.json() as unknown[]
    if (cursorRows.length !== 50) throw new Error(`The deep cursor page answered ${cursorAnswer.status} with ${cursorRows.length} rows, not 50`)

    // the other builds (BENCH_ALSO), each its own process on the same database
    const also: { label: string, port: number, pid: number }[] = []
    for (const folder of (process.env.BENCH_ALSO ?? '').split(',').filter(Boolean)) {
      const { app: other, port } = await startNamed(`also ${folder}`, {}, { entry: resolve(folder, 'output/server/index.mjs') })
      also.push({ label: `also ${folder}`.slice(-34), port, pid: other.pid })
    }
    const alsoTargets = (target: Target) => also.map(other => ({ ...target, url: target.url.replace(`:${appPort}/`, `:${other.port}/`), pid: other.pid }))

    // a target's server CPU per request against another's (median over the rounds)
    const cpu = (a: Measured, b: Measured) => a.cpuMs === undefined || b.cpuMs === undefined
      ? 'n/a'
      : `${median(a.rounds.map(r => r.cpuMs!)).toFixed(3)} ms against ${median(b.rounds.map(r => r.cpuMs!)).toFixed(3)} ms (${ratio(b, a, r => 1 / r.cpuMs!).toFixed(2)}x)`

    // the same for the Postgres server's CPU in the target's rounds
    const postgresCpu = (a: Measured, b: Measured) => a.postgresMs === undefined || b.postgresMs === undefined
      ? 'n/a'
      : `${median(a.rounds.map(r => r.postgresMs!)).toFixed(3)} ms against ${median(b.rounds.map(r => r.postgresMs!)).toFixed(3)} ms`

    if (process.env.BENCH_BACKENDS && process.env.BENCH_ONLY) {
      backendNamer = new pg.Client({ connectionString: databaseUrl, application_name: 'bench (naming the processes)' })
      await backendNamer.connect()
      closers.push(() => void backendNamer?.end())
    }

    const streamCount = Number(process.env.BENCH_STREAMS ?? 0)
    if (streamCount > 0) closers.push(await openEventStreams(databaseUrl, appPort, streamCount))

    const load0 = loadavg()
    console.info(`[bench] load average before: ${load0.map(l => l.toFixed(2)).join(' ')}; ${rounds} alternating rounds of ${seconds} s per target, ${connections} connections`)
    // BENCH_ONLY=read|write: that comparison alone (the prepared bare handler, the app, the app with the log off and BENCH_ALSO), for a quick look or a profile
    const only = process.env.BENCH_ONLY
    if (only === 'read' || only === 'write') {
      const base = only === 'read' ? app(path, keys.key) : app('/api/v1/tasks', keys.key, newTask)
      const bare = only === 'read' ? minimal(`${path}&prepared`) : minimal('/api/v1/tasks?same&prepared', newTask)
      const [bareResult, appResult, offResult, ...alsoResults] = await compare([bare, base, recordingOff(base), ...alsoTargets(base)]) as [Measured, Measured, Measured, ...Measured[]]
      const labelled: [string, Measured][] = [['app', appResult], ['app, API log off', offResult], ...also.map((other, i): [string, Measured] => [other.label, alsoResults[i]!])]
      console.info(row(`${only}, bare, prepared`, bareResult))
      for (const [label, measured] of labelled) {
        console.info(row(`${only}, ${label}`.slice(-34), measured), `ratio ${ratio(measured, bareResult).toFixed(2)}, CPU per request ${cpu(measured, bareResult)}, Postgres ${postgresCpu(measured, bareResult)}`)
      }
      if (backendNamer) printSchedules([['bare, prepared', bareResult], ...labelled])
      return
    }
    const [readBare, readPrepared, readKeyed, readApp, readOff, ...readAlso] = await compare([
      minimal(path), minimal(`${path}&prepared`), minimal(`${path}&prepared&keyed`), app(path, keys.key), recordingOff(app(path, keys.key)), ...alsoTargets(app(path, keys.key)),
    ]) as [Measured, Measured, Measured, Measured, Measured, ...Measured[]]
    const [writePlain, writePlainPrepared, writeJoined, writeBare, writePrepared, writeKeyed, writeApp, writeOff, ...writeAlso] = await compare([
      minimal('/api/v1/tasks', newTask), minimal('/api/v1/tasks?prepared', newTask), minimal('/api/v1/tasks?joined&prepared', newTask),
      minimal('/api/v1/tasks?same', newTask), minimal('/api/v1/tasks?same&prepared', newTask), minimal('/api/v1/tasks?same&prepared&keyed', newTask),
      app('/api/v1/tasks', keys.key, newTask), recordingOff(app('/api/v1/tasks', keys.key, newTask)), ...alsoTargets(app('/api/v1/tasks', keys.key, newTask)),
    ]) as [Measured, Measured, Measured, Measured, Measured, Measured, Measured, Measured, ...Measured[]]
    const [floorBare, floorApp] = await compare([minimal('/?health'), { ...app('/api/health', keys.key), headers: {} }])
    const [firstPage, cursorPage] = await compare([app(path, keys.deepKey), app(link, keys.deepKey)])
    // the offset page scans every row before it: three requests one after the other are enough to see it
    const offsetPage = await timedOneByOne(app(`${path}&offset=${deepOffset}`, keys.deepKey), 3)
    const database = await databaseOnly(databaseUrl, keys.keyId, keys.key)
    const load1 = loadavg()

    console.info(`\nRead: GET ${path}, ${taskCount.toLocaleString('en')} tasks in the team`)
    console.info(row('bare node:http + pg', readBare))
    console.info(row('bare, statement prepared', readPrepared))
    console.info(row('bare, prepared, + key statement', readKeyed))
    console.info(row('app (key auth, rate limit, names)', readApp))
    console.info(row('app, API log off', readOff))
    for (const [i, other] of also.entries()) console.info(row(other.label, readAlso[i]!))
    console.info(`Write: POST /api/v1/tasks ${JSON.stringify(newTask)}`)
    console.info(row('bare, plain INSERT', writePlain))
    console.info(row('bare, plain INSERT prepared', writePlainPrepared))
    console.info(row('bare, plain INSERT + names, prep.', writeJoined))
    console.info(row('bare, the app\'s statement', writeBare))
    console.info(row('bare, the app\'s statement prepared', writePrepared))
    console.info(row('bare, prepared, + key statement', writeKeyed))
    console.info(row('app (auth, limit, checks, audit)', writeApp))
    console.info(row('app, API log off', writeOff))
    for (const [i, other] of also.entries()) console.info(row(other.label, writeAlso[i]!))
    console.info('Floor: one `select 1` per request, no key, no rows')
    console.info(row('bare node:http + pg', floorBare))
    console.info(row('app, GET /api/health (Nitro, h3)', floorApp))
    console.info(`Deep: GET ${path} in a team of ${deepRows.toLocaleString('en')} tasks`)
    console.info(row('first page', firstPage))
    console.info(row(`cursor page at row ${(deepOffset + 50).toLocaleString('en')}`, cursorPage))
    console.info(row(`offset page at row ${deepOffset.toLocaleString('en')}`, offsetPage))
    console.info(`Database only: the same statements from one process, ${connections} loops over 10 connections, no HTTP`)
    const databaseRow = (label: string, figures: DatabaseFigures) => {
      const variant = (name: 'two' | 'pipelined' | 'fused') => `${figures[name].toFixed(0)}/s (${figures.ratios[name].toFixed(2)})`
      return `${label.padEnd(6)} work alone ${figures.one.toFixed(0)}/s; key + work ${variant('two')}; pipelined ${variant('pipelined')}; one statement ${variant('fused')}`
    }
    console.info(databaseRow('read', database.read))
    console.info(databaseRow('write', database.write))
    // the targets are judged against the bare handler with its statement prepared, as the app
    // prepares its own: unprepared, the bare handler pays for planning that the app does not
    console.info(`\nRatios: the median over the ${rounds} rounds of the ratio within a round (the best rounds' ratio in brackets)`)
    const both = (a: Measured, b: Measured) => `${ratio(a, b).toFixed(2)} [${(a.rps / b.rps).toFixed(2)}]`
    console.info(`read  app / bare (prepared):   ${verdict(ratio(readApp, readPrepared), 0.9)} [${(readApp.rps / readPrepared.rps).toFixed(2)}]; against the unprepared bare handler ${both(readApp, readBare)}`)
    console.info(`write app / bare (plain prepared INSERT, same answer): ${verdict(ratio(writeApp, writeJoined), 0.8)} [${(writeApp.rps / writeJoined.rps).toFixed(2)}]; against the app's statement run bare (prepared) ${both(writeApp, writePrepared)}; unprepared ${both(writeApp, writeBare)}; against a plain INSERT answering the row alone ${both(writeApp, writePlainPrepared)}`)
    console.info(`recording: API log on / off, same build, same rounds: read ${verdict(ratio(readApp, readOff), 0.95)}, write ${verdict(ratio(writeApp, writeOff), 0.95)}; server CPU per read ${cpu(readApp, readOff)}, per write ${cpu(writeApp, writeOff)}; Postgres CPU per read ${postgresCpu(readApp, readOff)}, per write ${postgresCpu(writeApp, writeOff)}`)
    // the most any design with a key statement of its own can reach: the bare handler plus that statement
    console.info(`key statement alone: bare + key / bare (prepared): read ${both(readKeyed, readPrepared)}, write ${both(writeKeyed, writePrepared)}; app / (bare + key): read ${both(readApp, readKeyed)}, write ${both(writeApp, writeKeyed)}`)
    // the server's own CPU time per request: the app's work beside the bare handler's, whatever the load
    console.info(`server CPU per request (median over the rounds): read app ${cpu(readApp, readPrepared)}; write app ${cpu(writeApp, writePrepared)}; floor app ${cpu(floorApp, floorBare)}`)
    console.info(`Postgres CPU per request (median over the rounds): read app ${postgresCpu(readApp, readPrepared)}; write app ${postgresCpu(writeApp, writeJoined)} (plain prepared INSERT)`)
    const extraMs = (a: Measured, b: Measured) => median(a.rounds.map(r => r.cpuMs ?? Number.NaN)) - median(b.rounds.map(r => r.cpuMs ?? Number.NaN))
    console.info(`the app's extra CPU per request over the bare handler: read ${extraMs(readApp, readPrepared).toFixed(3)} ms, write ${extraMs(writeApp, writePrepared).toFixed(3)} ms, of which the framework's floor (the same for every request) ${extraMs(floorApp, floorBare).toFixed(3)} ms`)
    for (const [i, other] of also.entries()) {
      console.info(`${other.label}: read ${ratio(readAlso[i]!, readPrepared).toFixed(2)}, write ${ratio(writeAlso[i]!, writePrepared).toFixed(2)} of the bare handler; server CPU per read ${cpu(readAlso[i]!, readPrepared)}, per write ${cpu(writeAlso[i]!, writePrepared)}`)
    }
    console.info(`deep  cursor p50 / first p50: ${verdict(ratio(cursorPage, firstPage, result => result.p50), 1.5, false)} (offset: ${(offsetPage.p50 / firstPage.p50).toFixed(1)}x)`)
    console.info(`load average after: ${load1.map(l => l.toFixed(2)).join(' ')} (2 cores; ${rounds} alternating rounds of ${seconds} s per figure, the best shown)`)
  }
  finally {
    for (const close of closers) close()
    bareServer?.kill('SIGTERM')
    for (const started of apps) await started.stop()
    await drop()
  }
}

if (process.argv[2] === '--minimal') {
  await runMinimalServer(process.argv[3]!, Number(process.argv[4]), process.argv[5]!, process.argv[6]!)
}
else {
  await main()
}
