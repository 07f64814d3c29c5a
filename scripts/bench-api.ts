// npm run bench:api — GET /api/v1/tasks?limit=50 through the app (key auth, joined names) against a
// minimal node:http + pg handler that runs the same SQL without auth, on one fresh Postgres database
// seeded with 10,000 tasks in one team. Prints requests per second, p50/p99 latency and the ratio.
//
// Needs a built app (`npm run build`; APP_BUILD_DIR is honoured) and a Postgres server:
// BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
// BENCH_SECONDS (default 6 per round), BENCH_ROUNDS (default 3) and BENCH_CONNECTIONS (default 16) tune the run.
// BENCH_PROFILE=<folder> writes a V8 CPU profile of both servers there.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import http from 'node:http'
import { createServer as createNetServer } from 'node:net'
import { resolve } from 'node:path'
import pg from 'pg'
import { generateApiKey } from '../server/utils/api-keys'
import { createDatabase } from '../server/utils/db-drivers'
import { listRecordsSql } from '../server/utils/records'
import { readCatalog } from '../server/utils/table-registry'

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const seconds = Number(process.env.BENCH_SECONDS ?? 6)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const taskCount = 10_000
const path = '/api/v1/tasks?limit=50'
const outputDir = process.env.APP_BUILD_DIR ? `${process.env.APP_BUILD_DIR}/output` : '.output'
const ids = {
  user: '00000000-0000-4000-8000-00000000b001',
  member: '00000000-0000-4000-8000-00000000b002',
  team: '00000000-0000-4000-8000-00000000b010',
  project: '00000000-0000-4000-8000-00000000b100',
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createNetServer()
    server.on('error', fail)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })
}

async function waitUntilUp(url: string, child: ChildProcess, output: string[]) {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`The server exited:\n${output.join('')}`)
    try {
      if ((await fetch(url)).status < 500) return
    }
    catch {
      // not listening yet
    }
    await new Promise(r => setTimeout(r, 100))
  }
  throw new Error(`The server did not start within 60 s:\n${output.join('')}`)
}

async function start(args: string[], env: Record<string, string>, probe: string): Promise<ChildProcess> {
  const output: string[] = []
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout!.on('data', chunk => output.push(String(chunk)))
  child.stderr!.on('data', chunk => output.push(String(chunk)))
  await waitUntilUp(probe, child, output)
  return child
}

/** The minimal handler: node:http + pg, the app's list SQL for tasks, no auth, no framework. */
async function runMinimalServer(databaseUrl: string, port: number) {
  // the same type parsers as the app (server/utils/db-drivers.ts)
  pg.types.setTypeParser(20, value => Number(value))
  pg.types.setTypeParser(1082, value => value)
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })
  const catalog = await readCatalog({
    query: async (text, params) => {
      const result = await pool.query(text, params)
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    },
    exec: async (sql) => {
      await pool.query(sql)
    },
  })
  const sql = listRecordsSql(catalog.get('tasks')!, catalog)
  http.createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    const limit = Number(url.searchParams.get('limit') ?? 50)
    const { rows } = await pool.query(sql, [ids.team, limit, 0])
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(rows))
  }).listen(port, '127.0.0.1')
  process.on('SIGTERM', () => process.exit(0))
}

async function seed(databaseUrl: string): Promise<string> {
  const db = createDatabase({ url: databaseUrl, max: 1 })
  const { key, prefix, hash } = generateApiKey()
  await db.transaction(async (tx) => {
    await tx.query(`insert into auth.users (id, email) values ($1, 'bench@example.com'), ($2, 'member@example.com')`, [ids.user, ids.member])
    await tx.query(`insert into public.profiles (id, email, name) values ($1, 'bench@example.com', 'Bea Bench'), ($2, 'member@example.com', 'Mo Member')`, [ids.user, ids.member])
    await tx.query(`insert into public.teams (id, name) values ($1, 'Bench Team')`, [ids.team])
    await tx.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'owner'), ($1, $3, 'member')`, [ids.team, ids.user, ids.member])
    await tx.query(`insert into public.projects (id, team_id, created_by, name) values ($1, $2, $3, 'Benchmark')`, [ids.project, ids.team, ids.user])
    await tx.query(
      `insert into public.tasks (team_id, created_by, title, status, priority, project_id, assignee_id, due_date, created_at)
       select $1, $2, 'Task ' || i, (array['todo', 'in_progress'])[1 + i % 2], 1 + i % 5,
              case when i % 3 = 0 then null else $3::uuid end, case when i % 2 = 0 then $4::uuid end,
              current_date + (i % 60), now() - make_interval(secs => i)
       from generate_series(1, $5::int) i`,
      [ids.team, ids.user, ids.project, ids.member, taskCount],
    )
    await tx.query(
      `insert into public.api_keys (team_id, created_by, name, key_prefix, key_hash) values ($1, $2, 'bench', $3, $4)`,
      [ids.team, ids.user, prefix, hash],
    )
  })
  await db.exec('analyze')
  await db.close()
  return key
}

interface Result { requests: number, rps: number, p50: number, p99: number, errors: number }

/** Keeps `connections` keep-alive requests in flight for `duration` seconds and measures each. */
async function load(url: string, headers: Record<string, string>, duration: number): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const latencies: number[] = []
  let errors = 0
  const deadline = performance.now() + duration * 1000
  const once = () => new Promise<void>((done) => {
    const started = performance.now()
    http.get(url, { agent, headers }, (response) => {
      response.resume()
      response.on('end', () => {
        if (response.statusCode === 200) latencies.push(performance.now() - started)
        else errors++
        done()
      })
    }).on('error', () => {
      errors++
      done()
    })
  })
  const worker = async () => {
    while (performance.now() < deadline) await once()
  }
  const began = performance.now()
  await Promise.all(Array.from({ length: connections }, worker))
  const elapsed = (performance.now() - began) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
  return { requests: latencies.length, rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors }
}

async function main() {
  const entry = resolve(outputDir, 'server/index.mjs')
  if (!existsSync(entry)) throw new Error(`No built app at ${entry}: run npm run build first (APP_BUILD_DIR is honoured).`)
  const name = `tws_bench_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const databaseUrl = url.toString()
  const children: ChildProcess[] = []
  try {
    const appPort = await freePort()
    const minimalPort = await freePort()
    console.info(`[bench] database ${name}; starting the app (applies the migrations)...`)
    children.push(await start([...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []), entry], {
      NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(appPort), NUXT_DATABASE_URL: databaseUrl,
      NUXT_SESSION_PASSWORD: randomBytes(24).toString('hex'), NUXT_SEED_DEMO: 'false',
      // rate limiting stays on (every request is counted) with a limit the benchmark never reaches
      API_RATE_LIMIT: '1000000000',
    }, `http://127.0.0.1:${appPort}/api/health`))
    console.info(`[bench] seeding ${taskCount.toLocaleString('en')} tasks in one team...`)
    const key = await seed(databaseUrl)
    children.push(await start([...process.execArgv, ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}/minimal`] : []), process.argv[1]!, '--minimal', databaseUrl, String(minimalPort)], {},
      `http://127.0.0.1:${minimalPort}/`))

    const targets = {
      app: { url: `http://127.0.0.1:${appPort}${path}`, headers: { authorization: `Bearer ${key}` } },
      minimal: { url: `http://127.0.0.1:${minimalPort}${path}`, headers: {} },
    }
    const check = await fetch(targets.app.url, { headers: targets.app.headers })
    const body = await check.json() as Record<string, unknown>[]
    if (check.status !== 200 || body.length !== 50 || !('project_name' in body[0]!)) throw new Error(`Unexpected app answer: ${check.status}`)
    // The machine may be shared: alternate the two targets over a few rounds and keep each one's best.
    console.info(`[bench] warming up, then ${rounds} alternating rounds of ${seconds} s per target with ${connections} connections...`)
    await load(targets.minimal.url, targets.minimal.headers, 2)
    await load(targets.app.url, targets.app.headers, 2)
    const results = { minimal: [] as Result[], app: [] as Result[] }
    for (let round = 0; round < rounds; round++) {
      results.minimal.push(await load(targets.minimal.url, targets.minimal.headers, seconds))
      results.app.push(await load(targets.app.url, targets.app.headers, seconds))
    }
    const best = (list: Result[]) => list.reduce((a, b) => (b.rps > a.rps ? b : a))
    const [minimal, app] = [best(results.minimal), best(results.app)]
    const row = (label: string, r: Result) =>
      `${label.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(1).padStart(6)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms   (${r.requests} ok, ${r.errors} errors)`
    console.info(`\nGET ${path}, ${taskCount.toLocaleString('en')} tasks in the team, ${connections} connections, best of ${rounds} rounds of ${seconds} s`)
    console.info(row('minimal node:http + pg', minimal))
    console.info(row('app (key auth, joined names)', app))
    console.info(`rounds (req/s): minimal ${results.minimal.map(r => r.rps.toFixed(0)).join(', ')}; app ${results.app.map(r => r.rps.toFixed(0)).join(', ')}`)
    const ratio = app.rps / minimal.rps
    console.info(`ratio app / minimal: ${ratio.toFixed(2)} (target >= 0.60) ${ratio >= 0.6 ? 'OK' : 'BELOW TARGET'}`)
  }
  finally {
    for (const child of children) child.kill('SIGTERM')
    await new Promise(r => setTimeout(r, 500))
    const cleanup = new pg.Client({ connectionString: serverUrl })
    await cleanup.connect()
    await cleanup.query(`drop database if exists ${name} with (force)`)
    await cleanup.end()
  }
}

if (process.argv[2] === '--minimal') {
  await runMinimalServer(process.argv[3]!, Number(process.argv[4]))
}
else {
  await main()
}
