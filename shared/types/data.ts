import type { CrudAction } from '../permissions'
import type { ActivityEntry } from './api'

/** A column of a domain table as the browser's data pages see it (GET /api/teams/{teamId}/tables). */
export interface DataColumn {
  name: string
  /** The database type, e.g. `text`, `integer`, `date`, `timestamp with time zone`. */
  type: string
  /** The JSON Schema of its value (the same one the OpenAPI document gives). */
  schema: { type?: string | string[], format?: string, enum?: string[] }
  nullable: boolean
  has_default: boolean
  /** The column's comment: its help text. */
  comment: string | null
  allowed_values: string[] | null
  references: { table: string, column: string } | null
  /** The field of a record that carries the referenced row's name (`project_id` -> `project_name`). */
  name_field: string | null
  /** A request may set it (not a system column). */
  is_writable: boolean
  /** A create must give it. */
  is_required: boolean
}

/** A record of a domain table as the API answers it: its columns, and a name field per foreign key. */
export type DataRecord = Record<string, unknown>

/** A domain table the caller may view, with the actions the caller's role allows. */
export interface DataTable {
  name: string
  comment: string | null
  /** The column that names a record (`name`, else `title`), if any. */
  title_column: string | null
  columns: DataColumn[]
  actions: Record<CrudAction, boolean>
}

/** GET /api/teams/{teamId}/overview */
export interface Overview {
  counts: { table: string, count: number }[]
  /** The count of each allowed value of the `status` column of each table that has one. */
  by_status: { table: string, counts: { value: string, count: number }[] }[]
  latest: ActivityEntry[]
  names: Record<string, string>
  /** Writes per UTC day and source over the last 14 days; null without activity.view. */
  writes_by_day: { day: string, web: number, api: number, chat: number, mcp: number, system: number }[] | null
}
