import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logLines, startApp, type LogLine, type TestApp } from '../support/app'
import { waitFor } from '../support/wait'

// Two app processes on one Postgres database run the same periodic purge (every 50 ms here): its
// advisory lock lets one run at a time. Each run of the purge is made to take at least 300 ms (a
// trigger on the table sleeps), so that runs of the two would overlap without the lock.
const settings = { ACTIVITY_PURGE_INTERVAL_MS: '50', LOG_LEVEL: 'debug' }
let first: TestApp
let second: TestApp
beforeAll(async () => {
  first = await startApp()
  await first.db.query(`create function public.test_slow_purge() returns trigger language plpgsql as $$
    begin perform pg_sleep(0.3); return null; end $$`)
  await first.db.query('create trigger test_slow_purge before delete on public.activity_log for each statement execute function public.test_slow_purge()')
  await first.restart(settings)
  second = await startApp(settings, { databaseUrl: first.databaseUrl })
})
afterAll(async () => {
  await second?.stop()
  await first?.db.query('drop trigger if exists test_slow_purge on public.activity_log').catch(() => {})
  await first?.stop()
})

/** The runs of the activity purge an app logged (debug lines), as [start, end] in ms. */
const runs = (app: TestApp): [number, number][] => logLines(app)
  .filter((line: LogLine) => line.tag === 'jobs' && line.job === 'activity-retention' && line.message === 'Ran activity-retention')
  .map(line => [Date.parse(line.started as string), Date.parse(line.started as string) + (line.ms as number)])

describe('a periodic job on two instances', () => {
  it('runs on one instance at a time', async () => {
    await waitFor('both instances to have purged three times', () => runs(first).length >= 3 && runs(second).length >= 3, { timeoutMs: 30_000 })
    const a = runs(first)
    const b = runs(second)
    for (const [start, end] of [...a, ...b]) expect(end - start).toBeGreaterThanOrEqual(300)
    // no run of one overlaps a run of the other
    for (const [startA, endA] of a) {
      for (const [startB, endB] of b) expect(endA <= startB || endB <= startA, `${startA}-${endA} and ${startB}-${endB}`).toBe(true)
    }
    // each found the other at it, and said so
    for (const app of [first, second]) {
      expect(logLines(app)).toContainEqual(expect.objectContaining({ level: 'info', tag: 'jobs', job: 'activity-retention', message: 'Another instance is running activity-retention; this one waits' }))
    }
    // and every line either printed is JSON (logLines fails otherwise)
    expect(logLines(first).length).toBeGreaterThan(0)
    expect(logLines(second).length).toBeGreaterThan(0)
  })
})
