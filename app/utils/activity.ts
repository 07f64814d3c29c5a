import type { ActivityEntry } from '#shared/types/api'
import { activityActions, activitySources } from '#shared/utils/schemas'

/** The filters of the Activity page; `all` and an empty table mean no filter. */
export interface ActivityFilterState {
  source: typeof activitySources[number] | 'all'
  table: string
  action: typeof activityActions[number] | 'all'
}

export interface ActivityChange {
  column: string
  /** Present for updates and deletes. */
  before?: unknown
  /** Present for updates and inserts. */
  after?: unknown
}

/** What an activity entry changed: old -> new per changed column for updates, the row's values otherwise. */
export function activityChanges(entry: Pick<ActivityEntry, 'action' | 'old_data' | 'new_data'>): ActivityChange[] {
  const newData = entry.new_data ?? {}
  const oldData = entry.old_data ?? {}
  if (entry.action === 'update') {
    return Object.keys(oldData).map(column => ({ column, before: oldData[column], after: newData[column] }))
  }
  if (entry.action === 'insert') return Object.entries(newData).map(([column, after]) => ({ column, after }))
  return Object.entries(oldData).map(([column, before]) => ({ column, before }))
}

/** A column value as text for display: null as `null`, objects as JSON. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string') return value
  return JSON.stringify(value)
}

/** The Activity page's filters and page number read from the address's query (unknown values are ignored). */
export function activityViewFromQuery(query: Record<string, unknown>): { filters: ActivityFilterState, page: number } {
  const text = (value: unknown) => (typeof value === 'string' ? value : '')
  const source = activitySources.find(source => source === query.source) ?? 'all'
  const action = activityActions.find(action => action === query.action) ?? 'all'
  const page = Number.parseInt(text(query.page), 10)
  return { filters: { source, table: text(query.table), action }, page: Number.isInteger(page) && page > 0 ? page : 1 }
}

/** The address query that keeps the Activity page's filters and page across reloads and links. */
export function activityViewToQuery(filters: ActivityFilterState, page: number): Record<string, string> {
  const query: Record<string, string> = {}
  if (filters.source !== 'all') query.source = filters.source
  if (filters.table) query.table = filters.table
  if (filters.action !== 'all') query.action = filters.action
  if (page > 1) query.page = String(page)
  return query
}
