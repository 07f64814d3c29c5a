// The parsed shape of a list request (filters, order, select with its embeds): what the readers
// of the query string produce and the SQL builders, the cursor and the embeds consume.
import type { ColumnInfo, TableInfo } from '../records/table-registry'

/** One condition on a column: `title=ilike.*plan*`, `status=not.in.(done)`, `body=fts(english).launch`. */
export interface Filter {
  kind: 'filter'
  column: ColumnInfo
  op: string
  negate: boolean
  value: string | string[] | null
  /** The text search configuration of fts, plfts, phfts and wfts; null: the database's default. */
  config: string | null
}

/** `or=(…)`, `and=(…)` and their `not.` forms, nested as deep as PostgREST nests them. */
export interface FilterGroup {
  kind: 'group'
  logic: 'and' | 'or'
  negate: boolean
  children: FilterNode[]
}

export type FilterNode = Filter | FilterGroup

/** A related table in a `select`: many-to-one (`project:projects(name)`) or one-to-many (`tasks(*)`). */
export interface Embed {
  target: TableInfo
  many: boolean
  /** The parent's column and the target's column that are equal (`project_id` = `id`, or `id` = `project_id`). */
  parentColumn: string
  targetColumn: string
  items: SelectItem[]
}

/** One item of `select`: every column, a column (maybe renamed) or an embedded table. */
export type SelectItem
  = | { kind: 'star' }
    | { kind: 'column', column: ColumnInfo, alias: string }
    | { kind: 'embed', alias: string, embed: Embed }

/** A list request over a domain table: filters, order, page size and a cursor or an offset. */
export interface RecordQuery {
  filters: FilterNode[]
  order: { column: ColumnInfo, direction: 'asc' | 'desc', nulls: 'first' | 'last' | null }[]
  limit: number
  offset: number
  cursor: unknown[] | null
  count: 'exact' | 'planned' | 'estimated' | null
  /** The items to answer (columns, renamed columns, embedded tables); null: every column and joined name. */
  select: SelectItem[] | null
}

/** What a query may reach besides its own table: the tables it may embed (a key's read scopes). */
export interface QueryAccess {
  /** Whether the caller may read that domain table; without it, embedding is refused. */
  canRead?: (table: string) => boolean
}
