import { z } from 'zod'
import { tableNamePattern } from './patterns'

export const apiLogSources = ['api', 'rest', 'mcp', 'realtime'] as const
export type ApiLogSource = typeof apiLogSources[number]
export const apiUsageBuckets = ['minute', 'hour', 'day'] as const
export type ApiUsageBucket = typeof apiUsageBuckets[number]
export const apiLogExportFormats = ['csv', 'ndjson'] as const

const timestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp, e.g. 2026-01-31T00:00:00Z' })

/** The filters of the API log, its export and (the key, the grant, the range) its usage. */
export const ApiLogFilters = z.object({
  api_key_id: z.uuid({ error: 'must be an API key id' }).optional(),
  grant_id: z.uuid({ error: 'must be a grant id' }).optional(),
  source: z.enum(apiLogSources, { error: 'must be api, rest, mcp or realtime' }).optional(),
  status: z.string().regex(/^[1-5](\d\d|xx)$/, 'must be a status code like 404 or a class like 4xx').optional(),
  method: z.string().regex(/^[A-Za-z]{1,10}$/, 'must be an HTTP method').transform(method => method.toUpperCase()).optional(),
  table: z.string().regex(tableNamePattern, 'must be a table name').optional(),
  from: timestamp.optional(),
  to: timestamp.optional(),
  request_id: z.string().trim().min(1).max(64, 'must be a request id (req_…)').optional(),
})

export const ApiLogQuery = ApiLogFilters.extend({
  limit: z.coerce.number({ error: 'must be a number from 1 to 100' }).int('must be a whole number')
    .min(1, 'must be at least 1').max(100, 'must be at most 100').default(50),
  cursor: z.string().max(200).regex(/^[A-Za-z0-9_-]+$/, 'must be a next_cursor of an earlier page').optional(),
})

export const ApiLogExportQuery = ApiLogFilters.extend({
  format: z.enum(apiLogExportFormats, { error: 'must be csv or ndjson' }),
})

export const ApiUsageQuery = z.object({
  api_key_id: z.uuid({ error: 'must be an API key id' }).optional(),
  grant_id: z.uuid({ error: 'must be a grant id' }).optional(),
  from: timestamp.optional(),
  to: timestamp.optional(),
  bucket: z.enum(apiUsageBuckets, { error: 'must be minute, hour or day' }).default('hour'),
})

/** One recorded request. */
export interface ApiLogEntry {
  id: string
  at: string
  api_key_id: string | null
  /** The key's name (null for a grant, or a deleted key). */
  api_key_name: string | null
  grant_id: string | null
  source: ApiLogSource
  method: string
  path: string
  table: string | null
  query: string | null
  status: number
  duration_ms: number
  error_code: string | null
  mcp_method: string | null
  mcp_tool: string | null
  request_bytes: number
  response_bytes: number
  ip: string | null
  user_agent: string | null
  client_request_id: string | null
}

export interface ApiLogPage {
  entries: ApiLogEntry[]
  next_cursor: string | null
}

export interface ApiUsageBucketRow {
  start: string
  requests: number
  ok: number
  client_errors: number
  rate_limited: number
  server_errors: number
  p50_ms: number | null
  p95_ms: number | null
}

export interface ApiUsage {
  buckets: ApiUsageBucketRow[]
  /** The whole range: its counts, and p50/p95 over every request in it. */
  totals: Omit<ApiUsageBucketRow, 'start'>
}

/** The columns of the export, in order. */
export const apiLogExportColumns = ['id', 'at', 'api_key_id', 'api_key_name', 'grant_id', 'source', 'method', 'path', 'table', 'query', 'status',
  'duration_ms', 'error_code', 'mcp_method', 'mcp_tool', 'request_bytes', 'response_bytes', 'ip', 'user_agent', 'client_request_id'] as const
