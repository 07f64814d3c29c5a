import type { ApiLogEntry, ApiUsageBucketRow } from '#shared/utils/api-log'
import type { BarSeries } from '~/types/charts'

/** The filters of an API log list, as its selects hold them ('all': no filter). */
export interface ApiLogFilterState {
  source: 'all' | 'api' | 'rest' | 'mcp' | 'realtime'
  status: 'all' | '2xx' | '4xx' | '429' | '5xx'
  method: 'all' | 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'HEAD'
  request_id: string
}

export const emptyApiLogFilters: ApiLogFilterState = { source: 'all', status: 'all', method: 'all', request_id: '' }

/** The query string of a list: the filters set, and the key when the list is one key's. */
export function apiLogQuery(filters: ApiLogFilterState, keyId?: string): string {
  const params = new URLSearchParams()
  if (keyId) params.set('api_key_id', keyId)
  for (const name of ['source', 'status', 'method'] as const) {
    if (filters[name] !== 'all') params.set(name, filters[name])
  }
  if (filters.request_id.trim()) params.set('request_id', filters.request_id.trim())
  return params.toString()
}

/** The badge color of an answer's status. */
export function statusColor(status: number): 'success' | 'warning' | 'error' | 'neutral' {
  if (status >= 500) return 'error'
  if (status === 429) return 'warning'
  if (status >= 400) return 'warning'
  return status >= 200 && status < 400 ? 'success' : 'neutral'
}

/** The stacked series of a usage chart: one per outcome. */
export const usageSeries: BarSeries<ApiUsageBucketRow>[] = [
  { name: 'Succeeded', color: 'var(--ui-success)', value: bucket => bucket.ok },
  { name: 'Client errors', color: 'var(--ui-warning)', value: bucket => bucket.client_errors },
  { name: 'Rate limited', color: 'var(--ui-info)', value: bucket => bucket.rate_limited },
  { name: 'Server errors', color: 'var(--ui-error)', value: bucket => bucket.server_errors },
]

/** The ranges a usage chart offers, with the bucket each is drawn in. */
export const usageRanges = [
  { label: 'Last 24 hours', value: '24h', bucket: 'hour', hours: 24 },
  { label: 'Last 7 days', value: '7d', bucket: 'day', hours: 7 * 24 },
  { label: 'Last 30 days', value: '30d', bucket: 'day', hours: 30 * 24 },
] as const

/** A duration in milliseconds for people. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '—'
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)} s` : `${ms < 10 ? ms.toFixed(1).replace(/\.0$/, '') : Math.round(ms)} ms`
}

/** Every recorded field of an entry, labelled, in the order a panel shows them. */
export function apiLogFields(entry: ApiLogEntry): { label: string, value: string }[] {
  const text = (value: string | number | null) => value === null || value === '' ? '—' : String(value)
  return [
    { label: 'Request id', value: entry.id },
    { label: 'Time', value: entry.at },
    { label: 'API key', value: entry.api_key_id ? `${entry.api_key_name ?? 'deleted key'} (${entry.api_key_id})` : '—' },
    { label: 'Grant', value: text(entry.grant_id) },
    { label: 'Source', value: entry.source },
    { label: 'Method', value: entry.method },
    { label: 'Path', value: entry.path },
    { label: 'Table', value: text(entry.table) },
    { label: 'Query', value: text(entry.query) },
    { label: 'Status', value: String(entry.status) },
    { label: 'Duration', value: formatMs(entry.duration_ms) },
    { label: 'Error code', value: text(entry.error_code) },
    { label: 'MCP method', value: text(entry.mcp_method) },
    { label: 'MCP tool', value: text(entry.mcp_tool) },
    { label: 'Request bytes', value: String(entry.request_bytes) },
    { label: 'Response bytes', value: String(entry.response_bytes) },
    { label: 'IP address', value: text(entry.ip) },
    { label: 'User agent', value: text(entry.user_agent) },
    { label: 'Client request id', value: text(entry.client_request_id) },
  ]
}
