// npm run bench:export — GET /api/teams/{teamId}/activity/export?format=ndjson of 100,000 and of
// 1,000,000 activity entries through the app, with the app process's peak memory (RSS sampled from
// /proc every 20 ms) and rows per second, against a bare baseline in the same run: the same keyset
// batches read straight from Postgres by this script, without the app or HTTP.
// Memory must not grow with the row count: the ratio of the two peaks is printed.
//
// Needs a built app (`npm run build`; APP_BUILD_DIR is honoured) and a Postgres server:
// BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres.
// BENCH_ROWS (default 1000000) sets the large export; the small one is a tenth of it.
import { readFileSync } from 'node:fs'
import type pg from 'pg'
import { startApp } from './harness/app'
import { createTeam, signUp } from './harness/http'

process.env.TEST_DB_KIND = 'postgres'
process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const largeCount = Number(process.env.BENCH_ROWS ?? 1_000_000)
const smallCount = Math.round(largeCount / 10)

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find(l => l.startsWith('VmRSS:'))
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024
}

/** Samples the process's RSS while `fn` runs; returns fn's result and the peak. */
async function withPeakRss<T>(pid: number, fn: () => Promise<T>): Promise<{ result: T, peakMb: number }> {
  let peakMb = rssMb(pid)
  const timer = setInterval(() => {
    peakMb = Math.max(peakMb, rssMb(pid))
  }, 20)
  try {
    const result = await fn()
    peakMb = Math.max(peakMb, rssMb(pid))
    return { result, peakMb }
  }
  finally {
    clearInterval(timer)
  }
}

async function seed(db: pg.Pool, teamId: string, actorId: string, count: number) {
  for (let start = 1; start <= count; start += 250_000) {
    const end = Math.min(count, start + 249_999)
    await db.query(
      `insert into public.activity_log (team_id, actor_id, source, table_name, record_id, action, new_data, old_data, created_at)
       select $1, $2, (array['web', 'api', 'chat'])[1 + g % 3], 'tasks', gen_random_uuid()::text, 'update',
              jsonb_build_object('title', 'Task number ' || g, 'status', 'in_progress', 'priority', 1 + g % 5, 'due_date', '2026-03-01'),
              jsonb_build_object('status', 'todo'),
              now() - make_interval(secs => g)
       from generate_series($3::int, $4::int) g`,
      [teamId, actorId, start, end],
    )
  }
  await db.query('analyze public.activity_log')
}

async function exportThroughApp(url: string, cookie: string, teamId: string): Promise<number> {
  const answer = await fetch(`${url}/api/teams/${teamId}/activity/export?format=ndjson`, { headers: { cookie } })
  if (!answer.ok || !answer.body) throw new Error(`export failed: ${answer.status}`)
  let lines = 0
  const decoder = new TextDecoder()
  for await (const chunk of answer.body) {
    const text = decoder.decode(chunk as Uint8Array, { stream: true })
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++
  }
  return lines
}

/** The bare baseline: the same keyset batches, read straight from Postgres and serialised, no app. */
async function exportBare(db: pg.Pool, teamId: string): Promise<number> {
  let rows = 0
  let after: [string | null, string | null] = [null, null]
  while (true) {
    const { rows: batch } = await db.query(
      `select a.*, to_char(a.created_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_text
       from public.activity_log a
       where a.team_id = $1 and ($2::timestamptz is null or (a.created_at, a.id) < ($2::timestamptz, $3::uuid))
       order by a.created_at desc, a.id desc limit 1000`,
      [teamId, ...after],
    )
    if (!batch.length) return rows
    for (const row of batch) JSON.stringify(row)
    rows += batch.length
    const last = batch[batch.length - 1]
    after = [last.created_text, last.id]
  }
}

async function main() {
  const app = await startApp()
  try {
    const owner = await signUp(app, { name: 'Bench Owner' })
    const smallTeam = await createTeam(owner, 'Small log')
    const largeTeam = await createTeam(owner, 'Large log')
    console.info(`Seeding ${smallCount.toLocaleString('en')} + ${largeCount.toLocaleString('en')} activity entries...`)
    await seed(app.db, smallTeam, owner.user!.id, smallCount)
    await seed(app.db, largeTeam, owner.user!.id, largeCount)
    const pid = app.pid!
    const idleMb = rssMb(pid)
    const results: { label: string, rows: number, seconds: number, peakMb: number, bareSeconds: number }[] = []
    for (const [label, teamId] of [['small', smallTeam], ['large', largeTeam]] as const) {
      const started = performance.now()
      const { result: rows, peakMb } = await withPeakRss(pid, () => exportThroughApp(app.url, owner.cookie, teamId))
      const seconds = (performance.now() - started) / 1000
      const bareStarted = performance.now()
      const bareRows = await exportBare(app.db, teamId)
      const bareSeconds = (performance.now() - bareStarted) / 1000
      if (bareRows !== rows) throw new Error(`row counts differ: app ${rows}, bare ${bareRows}`)
      results.push({ label, rows, seconds, peakMb, bareSeconds })
    }
    console.info(`\nApp process RSS when idle, after seeding: ${idleMb.toFixed(0)} MB`)
    console.info('rows       | app s  | app rows/s | bare s | bare rows/s | app/bare speed | app peak RSS')
    for (const r of results) {
      console.info(`${r.rows.toLocaleString('en').padEnd(10)} | ${r.seconds.toFixed(1).padStart(6)} | ${Math.round(r.rows / r.seconds).toLocaleString('en').padStart(10)} | ${r.bareSeconds.toFixed(1).padStart(6)} | ${Math.round(r.rows / r.bareSeconds).toLocaleString('en').padStart(11)} | ${(r.bareSeconds / r.seconds).toFixed(2).padStart(14)} | ${r.peakMb.toFixed(0)} MB`)
    }
    const [small, large] = results as [typeof results[0], typeof results[0]]
    console.info(`\nPeak RSS, ${large.rows.toLocaleString('en')} rows / ${small.rows.toLocaleString('en')} rows: ${(large.peakMb / small.peakMb).toFixed(2)} (rows x${(large.rows / small.rows).toFixed(0)})`)
    console.info(`Peak RSS above idle: ${(small.peakMb - idleMb).toFixed(0)} MB for ${small.rows.toLocaleString('en')} rows, ${(large.peakMb - idleMb).toFixed(0)} MB for ${large.rows.toLocaleString('en')} rows`)
  }
  finally {
    await app.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
