import type { ActivityEntry } from '#shared/types/api'
import { activityActions, activitySources } from '#shared/activity'

/** The filters of the Activity page; `all` and empty strings mean no filter; dates are `YYYY-MM-DD`, both inclusive. */
export interface ActivityFilterState {
  source: typeof activitySources[number] | 'all'
  table: string
  action: typeof activityActions[number] | 'all'
  actor_id: string
  record_id: string
  from: string
  to: string
}

export const emptyActivityFilters: ActivityFilterState = { source: 'all', table: '', action: 'all', actor_id: '', record_id: '', from: '', to: '' }

/** Logged tables that are not domain tables (the domain tables come from the registry). */
export const loggedSystemTables = ['teams', 'team_members', 'invitations', 'api_keys'] as const

/** Columns the server sets on every row: the entry already says who, when and which record. */
const hiddenColumns = new Set(['id', 'team_id', 'created_by', 'created_at', 'updated_at'])

export interface ActivityChange {
  column: string
  /** Present for updates and deletes. */
  before?: unknown
  /** Present for updates and inserts. */
  after?: unknown
}

/** What an activity entry changed: old -> new per changed column for updates, the row's values otherwise; never the system columns. */
export function activityChanges(entry: Pick<ActivityEntry, 'action' | 'old_data' | 'new_data'>): ActivityChange[] {
  const newData = entry.new_data ?? {}
  const oldData = entry.old_data ?? {}
  let changes: ActivityChange[]
  if (entry.action === 'update') changes = Object.keys(oldData).map(column => ({ column, before: oldData[column], after: newData[column] }))
  else if (entry.action === 'insert') changes = Object.entries(newData).map(([column, after]) => ({ column, after }))
  else changes = Object.entries(oldData).map(([column, before]) => ({ column, before }))
  return changes.filter(change => !hiddenColumns.has(change.column))
}

/** A column value as text for display: a referenced id as its name, null as `empty`, objects as JSON. */
export function formatValue(value: unknown, names: Record<string, string> = {}): string {
  if (value === null || value === undefined) return 'empty'
  if (typeof value === 'string') return names[value] ?? value
  return JSON.stringify(value)
}

/** Who made the change: a person, a removed account, or the system. */
export function activityActor(entry: Pick<ActivityEntry, 'actor_id' | 'actor_name'>): string {
  if (entry.actor_name) return entry.actor_name
  return entry.actor_id ? 'Removed user' : 'System'
}

const dayPattern = /^\d{4}-\d{2}-\d{2}$/

/** The API query of the filters: dates become the start of that day and the start of the day after `to`, in local time. */
export function activityApiQuery(filters: ActivityFilterState): Record<string, string> {
  const query: Record<string, string> = {}
  if (filters.source !== 'all') query.source = filters.source
  if (filters.table) query.table = filters.table
  if (filters.action !== 'all') query.action = filters.action
  if (filters.actor_id) query.actor_id = filters.actor_id
  if (filters.record_id) query.record_id = filters.record_id
  if (dayPattern.test(filters.from)) query.from = new Date(`${filters.from}T00:00:00`).toISOString()
  if (dayPattern.test(filters.to)) {
    const end = new Date(`${filters.to}T00:00:00`)
    end.setDate(end.getDate() + 1)
    query.to = end.toISOString()
  }
  return query
}

/** The Activity page's filters and page number read from the address's query (unknown values are ignored). */
export function activityViewFromQuery(query: Record<string, unknown>): { filters: ActivityFilterState, page: number } {
  const text = (value: unknown) => (typeof value === 'string' ? value : '')
  const day = (value: unknown) => (dayPattern.test(text(value)) ? text(value) : '')
  const source = activitySources.find(source => source === query.source) ?? 'all'
  const action = activityActions.find(action => action === query.action) ?? 'all'
  const page = Number.parseInt(text(query.page), 10)
  return {
    filters: { source, table: text(query.table), action, actor_id: text(query.actor_id), record_id: text(query.record_id), from: day(query.from), to: day(query.to) },
    page: Number.isInteger(page) && page > 0 ? page : 1,
  }
}

/** The address query that keeps the Activity page's filters and page across reloads and links. */
export function activityViewToQuery(filters: ActivityFilterState, page: number): Record<string, string> {
  const query: Record<string, string> = {}
  for (const [key, value] of Object.entries(filters)) {
    if (value && value !== 'all') query[key] = value
  }
  if (page > 1) query.page = String(page)
  return query
}

/** Whether any filter is set. */
export function isActivityFiltered(filters: ActivityFilterState): boolean {
  return Object.keys(activityViewToQuery(filters, 1)).length > 0
}

/** `tasks` -> `task`, `team_members` -> `team member`. */
function recordNoun(table: string): string {
  return table.replace(/_/g, ' ').replace(/s$/, '')
}

/** An entry in words: `Mia Member changed the task “Write the report” (status)`. */
export function activitySentence(entry: ActivityEntry): string {
  const verb = { insert: 'created', update: 'changed', delete: 'deleted' }[entry.action]
  const title = entry.record_title ? ` “${entry.record_title}”` : ''
  const fields = entry.action === 'update' ? activityChanges(entry).map(change => change.column) : []
  return `${activityActor(entry)} ${verb} the ${recordNoun(entry.table_name)}${title}${fields.length ? ` (${fields.join(', ')})` : ''}`
}
