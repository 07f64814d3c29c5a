// Writes the buffered API log entries: each instance keeps them in a bounded array and writes them
// at least every second (API_LOG_FLUSH_MS), and everything on a clean stop, in one statement per
// batch that inserts the entries and adds them to the usage rollups (per minute and per hour). A
// full buffer drops the newest entry and counts it (/metrics) rather than making a request wait.
// On Postgres the writer has a connection of its own (API_LOG_DATABASE_URL, else DATABASE_URL),
// so a slow write never holds one of the request pool's.
import { Gauge } from 'prom-client'
import type { Database } from '../db/db-drivers'
import { emptyHistogram, latencyBucket } from './latency'
import { setApiLogSink, type ApiLogRecord } from './recorder'
import { defineCounter, sharedMetric } from '../metrics'
import { useDb, isBehindPooler } from '../db/database'
import { setting } from '../settings'
import { createDatabase } from '../db/db-drivers'
import { logger } from '../log/logger'
import { schedule, type Job } from '../jobs/scheduler'

const log = logger('api-log')

/**
 * Entries per statement: making a statement's parameters blocks the event loop, about 12 ms for
 * 2,500 entries, which showed in the requests' p99 (16.8 ms against 13.4 with 500: bench:api).
 */
const batchSize = 500
const entriesDropped = defineCounter('api_log_entries_dropped_total', 'API log entries dropped: the buffer was full, or their batch failed')
const batchesWritten = defineCounter('api_log_batches_written_total', 'API log batches written (one statement each)')
const entriesWritten = defineCounter('api_log_entries_written_total', 'API log entries written')
const writeErrors = defineCounter('api_log_write_errors_total', 'API log batches that failed (their entries went back to the buffer while it had room)')
const unknownCredentials = defineCounter('api_requests_unknown_credential_total', 'Requests of /api/v1, /rest/v1 and /mcp without a known credential (in no team\'s log)')

let buffer: ApiLogRecord[] = []
let capacity = 50_000
let flusher: Job | undefined
let flushing: Promise<void> | undefined
let writer: Promise<Database> | undefined
let wasFailing = false
const knownDays = new Set<string>()

/** The buffer's entries now. */
export function apiLogBufferDepth(): number {
  return buffer.length
}

function keep(record: ApiLogRecord): void {
  if (buffer.length >= capacity) {
    entriesDropped().inc()
    return
  }
  buffer.push(record)
}

function useWriterDb(): Promise<Database> {
  writer ??= useDb().then((db) => {
    if (db.kind !== 'postgres') return db
    const url = setting('apiLogDatabaseUrl') || setting('databaseUrl')
    return createDatabase({ url, max: 1, prepare: setting('databasePrepare') !== 'false' && !isBehindPooler() })
  })
  return writer
}

const outcome = (status: number) => status === 429 ? 'rate_limited' : status >= 500 ? 'server_errors' : status >= 400 ? 'client_errors' : 'ok'

interface Rollup {
  team_id: string
  credential_id: string
  api_key_id: string | null
  grant_id: string | null
  period: 'minute' | 'hour'
  start: number
  requests: number
  ok: number
  client_errors: number
  rate_limited: number
  server_errors: number
  latency: number[]
}

/** The batch's rollups, in one order on every instance (so that two writers never deadlock). */
function rollups(batch: ApiLogRecord[]): Rollup[] {
  const byKey = new Map<string, Rollup>()
  for (const entry of batch) {
    const credential = entry.api_key_id ?? entry.grant_id
    if (!credential) continue
    for (const [period, size] of [['minute', 60_000], ['hour', 3_600_000]] as const) {
      const start = Math.floor(entry.at / size) * size
      const key = `${entry.team_id}|${credential}|${period}|${String(start).padStart(15, '0')}`
      let rollup = byKey.get(key)
      if (!rollup) {
        rollup = { team_id: entry.team_id, credential_id: credential, api_key_id: entry.api_key_id, grant_id: entry.grant_id, period, start, requests: 0, ok: 0, client_errors: 0, rate_limited: 0, server_errors: 0, latency: emptyHistogram() }
        byKey.set(key, rollup)
      }
      rollup.requests++
      rollup[outcome(entry.status)]++
      rollup.latency[latencyBucket(entry.duration_ms)]!++
    }
  }
  return [...byKey.entries()].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([, rollup]) => rollup)
}

const entryColumns = ['id', 'at', 'team_id', 'api_key_id', 'grant_id', 'source', 'method', 'path', 'table', 'query', 'status',
  'duration_ms', 'error_code', 'mcp_method', 'mcp_tool', 'request_bytes', 'response_bytes', 'ip', 'user_agent', 'client_request_id'] as const
const entryTypes = ['text', 'timestamptz', 'uuid', 'uuid', 'uuid', 'text', 'text', 'text', 'text', 'text', 'smallint',
  'real', 'text', 'text', 'text', 'integer', 'integer', 'text', 'text', 'text']
const usageTypes = ['uuid', 'uuid', 'uuid', 'uuid', 'text', 'timestamptz', 'integer', 'integer', 'integer', 'integer', 'integer', 'text']
const counted = ['requests', 'ok', 'client_errors', 'rate_limited', 'server_errors']

const writeSql = `with entries as (
    insert into public.api_log_entries (${entryColumns.map(column => `"${column}"`).join(', ')})
    select * from unnest(${entryTypes.map((type, i) => `$${i + 1}::${type}[]`).join(', ')})
  ), usage as (
    insert into public.api_usage as u (team_id, credential_id, api_key_id, grant_id, period, start, ${counted.join(', ')}, latency_buckets)
    select t, c, k, g, p, s, r, o, ce, rl, se, h::integer[]
    from unnest(${usageTypes.map((type, i) => `$${i + 1 + entryTypes.length}::${type}[]`).join(', ')}) as x(t, c, k, g, p, s, r, o, ce, rl, se, h)
    on conflict (team_id, credential_id, period, start) do update set
      ${counted.map(column => `${column} = u.${column} + excluded.${column}`).join(', ')},
      latency_buckets = public.api_usage_add_buckets(u.latency_buckets, excluded.latency_buckets)
  )
  select 1`

async function writeBatch(db: Database, batch: ApiLogRecord[]): Promise<void> {
  // the next day's partition too, made ahead: creating one locks the table a moment, better not at midnight
  const newest = batch.reduce((latest, entry) => Math.max(latest, entry.at), 0)
  const days = new Set([...batch.map(entry => entry.at), newest + 86_400_000].map(at => new Date(at).toISOString().slice(0, 10)))
  for (const day of days) {
    if (knownDays.has(day)) continue
    await db.query('select public.api_log_ensure_partition($1::date)', [day])
    knownDays.add(day)
  }
  const usage = rollups(batch)
  const params: unknown[] = entryColumns.map(column => batch.map(entry => column === 'at' ? new Date(entry.at).toISOString() : entry[column]))
  params.push(
    usage.map(u => u.team_id), usage.map(u => u.credential_id), usage.map(u => u.api_key_id), usage.map(u => u.grant_id),
    usage.map(u => u.period), usage.map(u => new Date(u.start).toISOString()), usage.map(u => u.requests), usage.map(u => u.ok),
    usage.map(u => u.client_errors), usage.map(u => u.rate_limited), usage.map(u => u.server_errors), usage.map(u => `{${u.latency.join(',')}}`),
  )
  await db.query(writeSql, params, { prepare: true })
}

/**
 * Writes what is buffered when it starts, batch after batch; entries that arrive meanwhile wait
 * for the next flush. (Writing until the buffer was empty never ended under a steady load: the
 * flush wrote batches of about 100 entries back to back, some 20 statements a second instead of
 * one, each with its own fixed cost: bench:api, statement durations logged.) A failed batch goes
 * back to the front of the buffer as far as it has room (the rest is dropped and counted), and is
 * tried at the next flush.
 */
export function flushApiLog(): Promise<void> {
  flushing ??= (async () => {
    try {
      const db = await useWriterDb()
      let due = buffer.length
      while (due > 0 && buffer.length) {
        const batch = buffer.slice(0, Math.min(batchSize, due))
        buffer = buffer.slice(batch.length)
        due -= batch.length
        try {
          await writeBatch(db, batch)
          batchesWritten().inc()
          entriesWritten().inc(batch.length)
          if (wasFailing) log.info('Writing again')
          wasFailing = false
        }
        catch (error) {
          writeErrors().inc()
          if (!wasFailing) log.error('A batch could not be written', { error })
          wasFailing = true
          const room = Math.max(0, capacity - buffer.length)
          if (room < batch.length) entriesDropped().inc(batch.length - room)
          buffer = [...batch.slice(0, room), ...buffer]
          return
        }
      }
    }
    finally {
      flushing = undefined
    }
  })()
  return flushing
}

/** Starts buffering and the periodic flush (once per process). */
export function startApiLogWriter(): void {
  if (flusher) return
  capacity = Number(setting('apiLogBufferSize')) || 50_000
  const interval = Math.min(Number(setting('apiLogFlushMs')) || 1000, 60_000)
  setApiLogSink(keep, () => unknownCredentials().inc())
  // it goes on while the open requests end after a stop signal: stopApiLogWriter stops it
  flusher = schedule({ name: 'api-log-flush', everyMs: interval, runAtStart: false, stopsOnSignal: false, run: flushApiLog })
}

/** Registers the log's metrics, the buffer's depth read at each scrape. */
export function setUpApiLogMetrics(): void {
  sharedMetric('api_log_buffer_entries', () => new Gauge({
    name: 'api_log_buffer_entries',
    help: 'API log entries waiting in this instance\'s buffer',
    collect() {
      this.set(buffer.length)
    },
  }))
  for (const counter of [entriesDropped, batchesWritten, entriesWritten, writeErrors, unknownCredentials]) counter()
}

/** On a clean stop: writes everything buffered (waiting for a write under way first), for at most `timeoutMs`. */
export async function stopApiLogWriter(timeoutMs = 20_000): Promise<void> {
  await flusher?.stop()
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (flushing) await Promise.race([flushing, new Promise(resolve => setTimeout(resolve, Math.max(0, deadline - Date.now())))])
    if (!buffer.length) break
    await Promise.race([flushApiLog(), new Promise(resolve => setTimeout(resolve, Math.max(0, deadline - Date.now())))])
    if (buffer.length && wasFailing) await new Promise(resolve => setTimeout(resolve, 200))
  }
  if (buffer.length) log.error(`${buffer.length} entries could not be written before the stop`, { entries: buffer.length })
}
