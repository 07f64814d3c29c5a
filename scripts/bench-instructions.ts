// npm run bench:instructions — the app's own CPU work per public API request, counted in machine
// instructions by valgrind's callgrind, so that two builds compare on a loaded, noisy machine:
// unlike seconds, an instruction count does not move with what else the machine is doing.
//
// For each build (BENCH_BUILDS: a comma-separated list of APP_BUILD_DIR folders; `.` for this
// checkout's .output; default `.`): a fresh Postgres database, the app started once plainly to
// apply the migrations and make an owner, a team and a key; then three runs of the app under
// callgrind, each counted from its start to its exit: BENCH_WARM writes and as many reads (the JIT
// compiles the hot paths); the same and BENCH_REQUESTS more writes (POST /api/v1/tasks); the same
// and BENCH_REQUESTS more reads (GET /api/v1/tasks?limit=50), BENCH_CONCURRENCY at a time. The
// differences, divided by BENCH_REQUESTS, are instructions per request (the server process's, all
// its threads; Postgres not included). Prints each build's ratio to the first. The builds take
// turns for BENCH_REPEAT runs, to show the spread that the JIT's and the collector's timing leave.
//
// Needs valgrind (`apt-get install valgrind`), built apps and a Postgres server (BENCH_DATABASE_URL,
// else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres). Slow: the app runs
// about fifty times slower under callgrind.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { benchDatabase } from './harness/bench-database'
import { startApp } from './harness/app'

const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const builds = (process.env.BENCH_BUILDS ?? '.').split(',').map(build => build.trim()).filter(Boolean)
const warm = Number(process.env.BENCH_WARM ?? 400)
const requests = Number(process.env.BENCH_REQUESTS ?? 400)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4)
const repeat = Number(process.env.BENCH_REPEAT ?? 2)
const appEnv = { API_RATE_LIMIT: '1000000000' }

const entryOf = (build: string) => resolve(build === '.' ? '.output' : join(build, 'output'), 'server/index.mjs')

/** An owner, a team and a key, made through the app's own routes. */
async function makeKey(url: string): Promise<string> {
  const json = { 'content-type': 'application/json' }
  const signUp = await fetch(`${url}/api/auth/signup`, { method: 'POST', headers: json, body: JSON.stringify({ email: `bench-${Date.now()}@example.com`, password: 'correct horse battery', name: 'Ina Instructions' }) })
  if (signUp.status !== 201) throw new Error(`sign-up answered ${signUp.status}`)
  const cookie = signUp.headers.getSetCookie().map(value => value.split(';')[0]).join('; ')
  const session = async (path: string, body: unknown) => {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers: { ...json, cookie }, body: JSON.stringify(body) })
    if (response.status !== 201) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
    return await response.json() as Record<string, string>
  }
  const team = await session('/api/teams', { name: 'Instructions' })
  return (await session(`/api/teams/${team.id}/api-keys`, { name: 'bench' })).key!
}

/** Sends `count` requests, `concurrency` at a time; every one must succeed. */
async function send(count: number, request: (i: number) => Promise<Response>): Promise<void> {
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const response = await request(next++)
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`a request answered ${response.status}`)
    }
  }))
}

/** The instructions of a callgrind dump (its `totals:` or `summary:` line). */
function instructionsOf(file: string): number {
  const line = readFileSync(file, 'utf8').split('\n').find(text => text.startsWith('totals:') || text.startsWith('summary:'))
  return Number(line?.split(/\s+/)[1] ?? Number.NaN)
}

/** The instructions the app ran from its start to its exit (SIGTERM) after `writes` writes and `reads` reads. */
async function countRun(build: string, databaseUrl: string, key: string, writes: number, reads: number): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-instructions-'))
  try {
    const out = join(folder, 'cg.out')
    const app = await startApp(appEnv, {
      databaseUrl,
      entry: entryOf(build),
      runUnder: { command: ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${out}`], startTimeoutMs: 10 * 60_000 },
    })
    const auth = { 'authorization': `Bearer ${key}`, 'content-type': 'application/json' }
    await send(writes, i => fetch(`${app.url}/api/v1/tasks`, { method: 'POST', headers: auth, body: JSON.stringify({ title: `Task ${i}` }) }))
    await send(reads, () => fetch(`${app.url}/api/v1/tasks?limit=50`, { headers: auth }))
    // SIGTERM, and the exit waited for: callgrind writes its counts as the process ends
    await app.stop()
    return instructionsOf(out)
  }
  finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

/**
 * Instructions per write and per read: three runs of the app on one database, from start to exit,
 * (warm-up writes and reads), (the same and `requests` more writes), (the same and `requests` more
 * reads); the differences, divided by `requests`, leave out the start, the warm-up and the exit.
 */
async function measure(build: string): Promise<{ write: number, read: number }> {
  const { databaseUrl, drop } = await benchDatabase(serverUrl, entryOf(build))
  try {
    const plain = await startApp(appEnv, { databaseUrl, entry: entryOf(build) })
    const key = await makeKey(plain.url)
    await plain.stop()
    const base = await countRun(build, databaseUrl, key, warm, warm)
    const moreWrites = await countRun(build, databaseUrl, key, warm + requests, warm)
    const moreReads = await countRun(build, databaseUrl, key, warm, warm + requests)
    return { write: (moreWrites - base) / requests, read: (moreReads - base) / requests }
  }
  finally {
    await drop()
  }
}

async function main() {
  console.log(`[bench] ${builds.length} build(s), ${repeat} run(s) each, ${warm} warm-up and ${requests} counted requests per kind, ${concurrency} at a time; load average ${loadavg().map(n => n.toFixed(2)).join(' ')}`)
  const results = new Map<string, { write: number[], read: number[] }>(builds.map(build => [build, { write: [], read: [] }]))
  for (let run = 1; run <= repeat; run++) {
    for (const build of builds) {
      const { write, read } = await measure(build)
      results.get(build)!.write.push(write)
      results.get(build)!.read.push(read)
      console.log(`run ${run} ${build}: write ${(write / 1e6).toFixed(3)} M instructions/request, read ${(read / 1e6).toFixed(3)} M`)
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const first = results.get(builds[0]!)!
  console.log('\nbuild | write (M instructions/request, min–max) | read | write, read against the first build')
  for (const [build, { write, read }] of results) {
    const range = (values: number[]) => `${(median(values) / 1e6).toFixed(3)} (${(Math.min(...values) / 1e6).toFixed(3)}–${(Math.max(...values) / 1e6).toFixed(3)})`
    console.log(`${build} | ${range(write)} | ${range(read)} | ${(median(write) / median(first.write)).toFixed(3)}, ${(median(read) / median(first.read)).toFixed(3)}`)
  }
  console.log(`load average after ${loadavg().map(n => n.toFixed(2)).join(' ')}`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
