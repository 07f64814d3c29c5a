import type { DataColumn, DataRecord, DataTable } from '#shared/types/data'
import type { datesFor } from './dates'

/** `in_progress` -> `In progress`, `due_date` -> `Due date`. */
export function humanize(name: string): string {
  const words = name.replace(/_/g, ' ').trim()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/** A column's label: `project_id` -> `Project`, `created_by` -> `Created by`. */
export function columnLabel(column: Pick<DataColumn, 'name' | 'references'>): string {
  return humanize(column.references ? column.name.replace(/_id$/, '') : column.name)
}

/** How a column is edited and shown. */
export type FieldKind = 'choice' | 'member' | 'record' | 'date' | 'datetime' | 'boolean' | 'integer' | 'number' | 'json' | 'longtext' | 'text'

/** The kind of a column, from its JSON Schema and foreign key. */
export function fieldKind(column: DataColumn): FieldKind {
  if (column.allowed_values) return 'choice'
  if (column.references?.table === 'profiles') return 'member'
  if (column.references) return 'record'
  const types = ([] as string[]).concat(column.schema.type ?? [])
  if (column.schema.format === 'date') return 'date'
  if (column.schema.format === 'date-time') return 'datetime'
  if (types.includes('boolean')) return 'boolean'
  if (types.includes('integer')) return 'integer'
  if (types.includes('number')) return 'number'
  if (!column.schema.type) return 'json'
  return ['body', 'description', 'notes', 'content'].includes(column.name) ? 'longtext' : 'text'
}

/**
 * A value of a column as a person reads it (the record page, its History): a date or moment in the
 * reader's format (`dates`: useDates()), Yes/No, a choice in words; '' for none. A foreign key is
 * its id here (the caller names it).
 */
export function valueText(column: DataColumn, value: unknown, dates: Pick<ReturnType<typeof datesFor>, 'formatDateTime' | 'formatCalendarDate'>): string {
  if (value === null || value === undefined || value === '') return ''
  const kind = fieldKind(column)
  if (kind === 'datetime') return dates.formatDateTime(String(value))
  if (kind === 'date') return dates.formatCalendarDate(String(value))
  if (kind === 'boolean') return value ? 'Yes' : 'No'
  if (kind === 'choice') return humanize(String(value))
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The name shown for a record: its title column, else the start of its id. */
export function recordTitle(table: Pick<DataTable, 'title_column'>, record: DataRecord): string {
  const title = table.title_column ? record[table.title_column] : null
  return typeof title === 'string' && title ? title : `${String(record.id ?? '').slice(0, 8)}…`
}

/** The operators of the list filters, as the public API names them. */
export const filterOperators = [
  { value: 'eq', label: 'is' },
  { value: 'neq', label: 'is not' },
  { value: 'gt', label: 'after / more than' },
  { value: 'gte', label: 'from / at least' },
  { value: 'lt', label: 'before / less than' },
  { value: 'lte', label: 'until / at most' },
  { value: 'ilike', label: 'contains' },
  { value: 'is.null', label: 'is empty' },
  { value: 'not.is.null', label: 'is not empty' },
] as const
export type FilterOperator = typeof filterOperators[number]['value']

export interface DataFilter {
  column: string
  op: FilterOperator
  value: string
}

/** The list view of a table: filters, search, order and visible columns, as kept in the address. */
export interface DataView {
  filters: DataFilter[]
  search: string
  order: { column: string, direction: 'asc' | 'desc' } | null
  columns: string[] | null
}

const reserved = new Set(['search', 'order', 'columns'])
const valueless = new Set<FilterOperator>(['is.null', 'not.is.null'])

/** The filter in the query language: `eq.todo`, `ilike.*text*`, `is.null`. */
export function filterValue(filter: DataFilter): string {
  if (valueless.has(filter.op)) return filter.op
  if (filter.op === 'ilike') return `ilike.*${filter.value}*`
  return `${filter.op}.${filter.value}`
}

/** Reads one `<op>.<value>` of the address back into a filter; null for one this page does not offer. */
function parseFilter(column: string, text: string): DataFilter | null {
  if (valueless.has(text as FilterOperator)) return { column, op: text as FilterOperator, value: '' }
  const dot = text.indexOf('.')
  const op = text.slice(0, dot) as FilterOperator
  if (dot < 1 || !filterOperators.some(o => o.value === op)) return null
  const value = text.slice(dot + 1)
  return { column, op, value: op === 'ilike' ? value.replace(/^\*|\*$/g, '') : value }
}

/** The view of a table read from the address (unknown columns and operators are ignored). */
export function dataViewFromQuery(table: DataTable, query: Record<string, unknown>): DataView {
  const names = new Set(table.columns.map(c => c.name))
  const filters: DataFilter[] = []
  for (const [key, raw] of Object.entries(query)) {
    if (reserved.has(key) || !names.has(key)) continue
    for (const text of ([] as unknown[]).concat(raw)) {
      const filter = typeof text === 'string' ? parseFilter(key, text) : null
      if (filter) filters.push(filter)
    }
  }
  const [orderColumn, direction] = typeof query.order === 'string' ? query.order.split('.') : []
  const order = orderColumn && names.has(orderColumn) && (direction === 'asc' || direction === 'desc') ? { column: orderColumn, direction } as const : null
  const columns = typeof query.columns === 'string' ? query.columns.split(',').filter(name => names.has(name)) : null
  return { filters, search: typeof query.search === 'string' ? query.search : '', order, columns: columns?.length ? columns : null }
}

/** The address query of a view. */
export function dataViewToQuery(view: DataView): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {}
  for (const filter of view.filters) {
    const value = filterValue(filter)
    const existing = query[filter.column]
    query[filter.column] = existing === undefined ? value : ([] as string[]).concat(existing, value)
  }
  if (view.search) query.search = view.search
  if (view.order) query.order = `${view.order.column}.${view.order.direction}`
  if (view.columns) query.columns = view.columns.join(',')
  return query
}

/** The API query of a view: its filters, the search as `ilike` on the title column, and the order. */
export function dataViewApiQuery(table: DataTable, view: DataView): Record<string, string | string[]> {
  const query = dataViewToQuery({ ...view, columns: null, search: '' })
  if (view.search && table.title_column) {
    const search = `ilike.*${view.search}*`
    const existing = query[table.title_column]
    query[table.title_column] = existing === undefined ? search : ([] as string[]).concat(existing, search)
  }
  return query
}

/** The `cursor` of a `Link: <...>; rel="next"` header, if any. */
export function nextCursor(link: string | null): string | null {
  const next = link?.split(',').find(part => /rel="?next"?/.test(part))
  const url = next && /<([^>]+)>/.exec(next)?.[1]
  return url ? new URL(url, 'http://x').searchParams.get('cursor') : null
}

/** The total of a `Content-Range: 0-49/1234` header. */
export function rangeTotal(range: string | null): number | null {
  const total = range && /\/(\d+)$/.exec(range)?.[1]
  return total ? Number(total) : null
}
