// What a team reads of its API log: pages of entries (newest first, by cursor), one entry, the
// streamed export, and usage per bucket from the rollups.
import type { z } from 'zod'
import { apiLogExportColumns, type ApiLogEntry, type ApiLogExportQuery, type ApiLogFilters, type ApiLogPage, type ApiLogQuery, type ApiUsage, type ApiUsageBucketRow, type ApiUsageQuery } from '#shared/utils/api-log'
import { requireTeam, type AuditedClient } from '../db/audited-client'
import { csvHeader, csvRows } from '../http/csv'
import { addHistogram, emptyHistogram, histogramQuantile } from './latency'
import { requestIdTime } from './request-id'

type Filters = z.output<typeof ApiLogFilters>

/** The where clause of the team's entries that match the filters; $1 is the team. */
function logWhere(teamId: string, filters: Filters) {
  const where = ['e.team_id = $1']
  const params: unknown[] = [teamId]
  const add = (condition: (n: number) => string, value: unknown) => {
    params.push(value)
    where.push(condition(params.length))
  }
  if (filters.api_key_id) add(n => `e.api_key_id = $${n}`, filters.api_key_id)
  if (filters.grant_id) add(n => `e.grant_id = $${n}`, filters.grant_id)
  if (filters.source) add(n => `e.source = $${n}`, filters.source)
  if (filters.method) add(n => `e.method = $${n}`, filters.method)
  if (filters.table) add(n => `e."table" = $${n}`, filters.table)
  if (filters.from) add(n => `e.at >= $${n}::timestamptz`, filters.from)
  if (filters.to) add(n => `e.at < $${n}::timestamptz`, filters.to)
  if (filters.status) {
    const low = Number(filters.status[0]) * 100
    if (filters.status.endsWith('xx')) {
      add(n => `e.status >= $${n}::smallint`, low)
      add(n => `e.status < $${n}::smallint`, low + 100)
    }
    else add(n => `e.status = $${n}::smallint`, Number(filters.status))
  }
  if (filters.request_id) {
    // the id says when it was made: the team's index finds it at that time (in that day's
    // partition); an id this app did not make is no entry's
    const time = requestIdTime(filters.request_id)
    if (time === undefined) where.push('false')
    else {
      add(n => `e.at = $${n}::timestamptz`, new Date(time).toISOString())
      add(n => `e.id = $${n}`, filters.request_id)
    }
  }
  return { condition: where.join(' and '), params }
}

const entryColumns = `e.id, to_char(e.at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at,
  e.api_key_id, k.name as api_key_name, e.grant_id, e.source, e.method, e.path, e."table", e.query, e.status::int as status,
  round(e.duration_ms::numeric, 2)::float8 as duration_ms, e.error_code, e.mcp_method, e.mcp_tool, e.request_bytes, e.response_bytes,
  e.ip, e.user_agent, e.client_request_id`
const entryJoins = 'left join public.api_keys k on k.id = e.api_key_id and k.team_id = e.team_id'

const encodeCursor = (entry: ApiLogEntry) => Buffer.from(JSON.stringify([entry.at, entry.id])).toString('base64url')

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && !Number.isNaN(Date.parse(value[0])) && typeof value[1] === 'string') {
      return [value[0], value[1]]
    }
  }
  catch {
    // answered below
  }
  throw createError({ statusCode: 400, statusMessage: 'cursor: must be the next_cursor of an earlier page' })
}

/** A page of the team's entries, newest first; `next_cursor` continues after its last. */
export async function listApiLog(client: AuditedClient, query: z.output<typeof ApiLogQuery>): Promise<ApiLogPage> {
  const { limit, cursor, ...filters } = query
  const { condition, params } = logWhere(requireTeam(client), filters)
  let where = condition
  if (cursor) {
    const [at, id] = decodeCursor(cursor)
    params.push(at, id)
    where += ` and (e.at, e.id) < ($${params.length - 1}::timestamptz, $${params.length})`
  }
  params.push(limit + 1)
  const { rows } = await client.read<ApiLogEntry>(
    `select ${entryColumns} from public.api_log_entries e ${entryJoins}
     where ${where} order by e.at desc, e.id desc limit $${params.length}`,
    params,
  )
  const entries = rows.slice(0, limit)
  return { entries, next_cursor: rows.length > limit ? encodeCursor(entries[entries.length - 1]!) : null }
}

/** One entry of the team by its request id; 404 when the team has none of that id. */
export async function getApiLogEntry(client: AuditedClient, requestId: string): Promise<ApiLogEntry> {
  const page = requestId.length <= 64 ? await listApiLog(client, { request_id: requestId, limit: 1 }) : { entries: [] }
  const entry = page.entries[0]
  if (!entry) throw createError({ statusCode: 404, statusMessage: 'No API log entry of this team has that request id' })
  return entry
}

const exportBatchSize = 1000

/** Every entry matching the filters, newest first, as CSV (with a header line) or NDJSON, a batch at a time. */
export async function* exportApiLog(client: AuditedClient, query: z.output<typeof ApiLogExportQuery>): AsyncGenerator<string> {
  const { format, ...filters } = query
  if (format === 'csv') yield csvHeader(apiLogExportColumns)
  let cursor: string | undefined
  while (true) {
    const page = await listApiLog(client, { ...filters, limit: exportBatchSize, cursor })
    if (!page.entries.length) return
    yield format === 'csv'
      ? csvRows(apiLogExportColumns, page.entries)
      : page.entries.map(row => `${JSON.stringify(row)}\n`).join('')
    if (!page.next_cursor) return
    cursor = page.next_cursor
  }
}

const bucketMs = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const
const defaultRange = { minute: 3_600_000, hour: 86_400_000, day: 30 * 86_400_000 } as const
const maxRangeMs = 90 * 86_400_000
const maxBuckets = 10_000

interface UsageRow {
  start_ms: number
  requests: number
  ok: number
  client_errors: number
  rate_limited: number
  server_errors: number
  latency_buckets: number[]
}

/**
 * Requests per bucket by outcome with p50/p95, every bucket of [from, to) present (from rounded
 * down to its bucket), read from the per-minute rollups (minute buckets) or the per-hour ones.
 */
export async function apiUsage(client: AuditedClient, query: z.output<typeof ApiUsageQuery>): Promise<ApiUsage> {
  const size = bucketMs[query.bucket]
  const to = query.to ? Date.parse(query.to) : Date.now()
  const from = query.from ? Date.parse(query.from) : to - defaultRange[query.bucket]
  if (from >= to) throw createError({ statusCode: 400, statusMessage: 'from: must be before to' })
  if (to - from > maxRangeMs) throw createError({ statusCode: 400, statusMessage: 'from, to: must be at most 90 days apart' })
  const first = Math.floor(from / size) * size
  if ((to - first) / size > maxBuckets) throw createError({ statusCode: 400, statusMessage: `bucket: more than ${maxBuckets} ${query.bucket}s in this range; choose a larger bucket` })
  const params: unknown[] = [requireTeam(client), query.bucket === 'minute' ? 'minute' : 'hour', new Date(first).toISOString(), new Date(to).toISOString()]
  let where = 'u.team_id = $1 and u.period = $2 and u.start >= $3::timestamptz and u.start < $4::timestamptz'
  if (query.api_key_id) {
    params.push(query.api_key_id)
    where += ` and u.credential_id = $${params.length} and u.api_key_id = $${params.length}`
  }
  if (query.grant_id) {
    params.push(query.grant_id)
    where += ` and u.credential_id = $${params.length} and u.grant_id = $${params.length}`
  }
  const { rows } = await client.read<UsageRow>(
    `select (extract(epoch from u.start) * 1000)::float8 as start_ms, u.requests, u.ok, u.client_errors, u.rate_limited,
       u.server_errors, u.latency_buckets
     from public.api_usage u where ${where}`,
    params,
  )
  const buckets = new Map<number, { row: Omit<ApiUsageBucketRow, 'p50_ms' | 'p95_ms'>, latency: number[] }>()
  for (let start = first; start < to; start += size) {
    buckets.set(start, { row: { start: new Date(start).toISOString(), requests: 0, ok: 0, client_errors: 0, rate_limited: 0, server_errors: 0 }, latency: emptyHistogram() })
  }
  for (const row of rows) {
    const bucket = buckets.get(Math.floor(row.start_ms / size) * size)
    if (!bucket) continue
    bucket.row.requests += row.requests
    bucket.row.ok += row.ok
    bucket.row.client_errors += row.client_errors
    bucket.row.rate_limited += row.rate_limited
    bucket.row.server_errors += row.server_errors
    addHistogram(bucket.latency, row.latency_buckets)
  }
  const all = emptyHistogram()
  const totals = { requests: 0, ok: 0, client_errors: 0, rate_limited: 0, server_errors: 0 }
  for (const { row, latency } of buckets.values()) {
    addHistogram(all, latency)
    for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += row[key]
  }
  return {
    buckets: [...buckets.values()].map(({ row, latency }) => ({ ...row, p50_ms: histogramQuantile(latency, 0.5), p95_ms: histogramQuantile(latency, 0.95) })),
    totals: { ...totals, p50_ms: histogramQuantile(all, 0.5), p95_ms: histogramQuantile(all, 0.95) },
  }
}

/** Each of the team's keys' requests over the last 24 hours (from the per-hour rollups), by key id. */
export async function keyRequestsLastDay(client: AuditedClient): Promise<Record<string, number>> {
  const { rows } = await client.read<{ api_key_id: string, requests: number }>(
    `select u.api_key_id, sum(u.requests)::int as requests from public.api_usage u
     where u.team_id = $1 and u.period = 'hour' and u.start >= date_trunc('hour', now()) - interval '23 hours'
       and u.api_key_id is not null
     group by u.api_key_id`,
    [requireTeam(client)],
  )
  return Object.fromEntries(rows.map(row => [row.api_key_id, row.requests]))
}
