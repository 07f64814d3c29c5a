import type { Queryable } from '../db/db-drivers'
import { useDb } from '../db/database'

/** One column of a table, as the catalog describes it. */
export interface ColumnInfo {
  name: string
  /** format_type(): 'text', 'integer', 'uuid', 'date', 'timestamp with time zone', ... */
  type: string
  nullable: boolean
  /** A default, identity or generated column. */
  hasDefault: boolean
  comment: string | null
  /** From a single-column CHECK (col in (...)) / (col = any (array[...])). */
  allowedValues: string[] | null
  /** A single-column foreign key. */
  references: { table: string, column: string } | null
}

export interface CheckInfo {
  name: string
  /** As pg_get_constraintdef renders it, e.g. `CHECK ((priority >= 1) AND (priority <= 5))`. */
  definition: string
  columns: string[]
}

export interface TableInfo {
  name: string
  comment: string | null
  columns: ColumnInfo[]
  checks: CheckInfo[]
  /** Has team_id, created_by and created_at, and is neither a system table nor one of the app's own. */
  isDomain: boolean
}

/** System tables and the app's own tables that are never exposed as domain tables. */
const systemTables = new Set([
  'teams', 'profiles', 'team_members', 'invitations', 'api_keys', 'rate_limits', 'schema_migrations',
  'activity_log', 'chats', 'chat_messages',
  // /api/v1/events is the change feed, never a table's routes
  'events', 'record_events',
])
const isSystemTable = (name: string) => systemTables.has(name) || name.startsWith('webhook_')

/**
 * A catalog type without its precision: `timestamp(3) with time zone` -> `timestamp with time zone`,
 * `numeric(10,2)` -> `numeric` (a length, as in `character varying(20)`, goes too).
 */
export function basicType(type: string): string {
  return type.replace(/\(\d+(,\d+)?\)/, '')
}

/** Columns every domain table carries; the server sets them, a request never does. */
export const systemColumns = ['id', 'team_id', 'created_by', 'created_at', 'updated_at'] as const

interface ColumnRow {
  table_name: string
  table_comment: string | null
  column_name: string
  type: string
  nullable: boolean
  has_default: boolean
  comment: string | null
}

interface ConstraintRow {
  table_name: string
  name: string
  kind: 'c' | 'f'
  definition: string
  columns: string[]
  ref_table: string | null
  ref_columns: string[] | null
}

const columnsSql = `
  select c.relname as table_name, obj_description(c.oid, 'pg_class') as table_comment,
         a.attname as column_name, format_type(a.atttypid, a.atttypmod) as type,
         not a.attnotnull as nullable,
         (a.atthasdef or a.attidentity <> '' or a.attgenerated <> '') as has_default,
         col_description(c.oid, a.attnum) as comment
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
  where n.nspname = 'public' and c.relkind in ('r', 'p')
  order by c.relname, a.attnum`

const constraintsSql = `
  select c.relname as table_name, con.conname::text as name, con.contype::text as kind,
         pg_get_constraintdef(con.oid) as definition,
         array(select a.attname::text from unnest(con.conkey) with ordinality k(attnum, i)
               join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum order by k.i) as columns,
         case when fn.nspname = 'public' then fc.relname::text else fn.nspname || '.' || fc.relname end as ref_table,
         case when con.confrelid <> 0 then
           array(select a.attname::text from unnest(con.confkey) with ordinality k(attnum, i)
                 join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.attnum order by k.i)
         end as ref_columns
  from pg_constraint con
  join pg_class c on c.oid = con.conrelid
  join pg_namespace n on n.oid = c.relnamespace
  left join pg_class fc on fc.oid = con.confrelid
  left join pg_namespace fn on fn.oid = fc.relnamespace
  where n.nspname = 'public' and con.contype in ('c', 'f')
  order by c.relname, con.conname`

/** A SQL string literal body, with '' unescaped. */
const unquote = (literal: string) => literal.slice(1, -1).replace(/''/g, '\'')

/**
 * The values of a single-column list CHECK, as pg_get_constraintdef renders
 * `col in ('a', 'b')`: `CHECK ((col = ANY (ARRAY['a'::text, 'b'::text])))`; null for any other CHECK.
 */
export function checkAllowedValues(definition: string): { column: string, values: string[] } | null {
  const match = /^CHECK \(+"?([a-z_][a-z0-9_]*)"?\)? = ANY \(+ARRAY\[(.*)\]\)+(?:::[a-z ]+\[\])?\)*$/i.exec(definition)
  if (!match) return null
  const values = [...match[2]!.matchAll(/('(?:[^']|'')*')(?:::[a-z ]+)?/gi)].map(m => unquote(m[1]!))
  return values.length ? { column: match[1]!, values } : null
}

/** Reads every table of schema public from the catalog: columns, comments, CHECKs and foreign keys. */
export async function readCatalog(db: Queryable): Promise<Map<string, TableInfo>> {
  const [columns, constraints] = await Promise.all([
    db.query<ColumnRow>(columnsSql),
    db.query<ConstraintRow>(constraintsSql),
  ])
  const tables = new Map<string, TableInfo>()
  for (const row of columns.rows) {
    let table = tables.get(row.table_name)
    if (!table) {
      table = { name: row.table_name, comment: row.table_comment, columns: [], checks: [], isDomain: false }
      tables.set(row.table_name, table)
    }
    table.columns.push({
      name: row.column_name,
      type: row.type,
      nullable: row.nullable,
      hasDefault: row.has_default,
      comment: row.comment,
      allowedValues: null,
      references: null,
    })
  }
  for (const row of constraints.rows) {
    const table = tables.get(row.table_name)
    if (!table) continue
    if (row.kind === 'c') {
      table.checks.push({ name: row.name, definition: row.definition, columns: row.columns })
      const list = row.columns.length === 1 ? checkAllowedValues(row.definition) : null
      const column = list && table.columns.find(c => c.name === list.column)
      if (column) column.allowedValues = list.values
    }
    else if (row.columns.length === 1 && row.ref_table && row.ref_columns?.length === 1) {
      const column = table.columns.find(c => c.name === row.columns[0])
      if (column) column.references = { table: row.ref_table, column: row.ref_columns[0]! }
    }
  }
  for (const table of tables.values()) {
    const names = new Set(table.columns.map(c => c.name))
    table.isDomain = !isSystemTable(table.name) && ['team_id', 'created_by', 'created_at'].every(name => names.has(name))
  }
  return tables
}

let registry: Promise<Map<string, TableInfo>> | undefined

/** Every table of schema public, read once from the app's database and cached. */
export function useTableRegistry(): Promise<Map<string, TableInfo>> {
  registry ??= useDb().then(readCatalog).catch((error) => {
    registry = undefined
    throw error
  })
  return registry
}

/** The domain table of that name; undefined for an unknown, system or non-domain name. */
export async function domainTable(name: string): Promise<TableInfo | undefined> {
  const table = (await useTableRegistry()).get(name)
  return table?.isDomain ? table : undefined
}

/** The domain tables, by name. */
export async function domainTables(): Promise<TableInfo[]> {
  return [...(await useTableRegistry()).values()].filter(table => table.isDomain).sort((a, b) => a.name.localeCompare(b.name))
}

/** A quoted SQL identifier, for names that come from the catalog (never from a request as they are). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}
