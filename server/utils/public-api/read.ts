// Running reads: a page of a list (with its count and next cursor) and the records a write answers.
import type { DataRecord } from '#shared/types/data'
import { requireTeam, type AuditedClient } from '../db/audited-client'
import type { Queryable } from '../db/db-drivers'
import { cachedSelectTemplate } from '../records/record-sql'
import { quoteIdent, type TableInfo, useTableRegistry } from '../records/table-registry'
import { shapeArrayRows, shapeRows } from './answer'
import { encodeCursor, cursorScope } from './cursor'
import { readErrors } from './errors'
import type { RecordQuery, SelectItem } from './query'
import { afterSql, embedColumns, filterSql, orderSql } from './sql'

/** `count=estimated` counts exactly up to this many rows, and answers the planner's estimate above it. */
const estimatedExactUpTo = 1000

/** The planner's estimate of the rows matching a where clause. */
async function plannedCount(client: AuditedClient, table: TableInfo, where: string, params: unknown[]): Promise<number> {
  const { rows } = await client.read<{ 'QUERY PLAN': unknown }>(`explain (format json) select 1 from public.${quoteIdent(table.name)} r where ${where}`, params)
  const plan = rows[0]?.['QUERY PLAN']
  const parsed = (typeof plan === 'string' ? JSON.parse(plan) : plan) as { Plan: { 'Plan Rows': number } }[]
  return Math.round(parsed[0]?.Plan['Plan Rows'] ?? 0)
}

/** A page of the team's records as `select` asks, plus the next cursor when the page is full, and the Content-Range. */
export async function queryRecords(client: AuditedClient, table: TableInfo, query: RecordQuery): Promise<{ rows: DataRecord[], next: string | null, range: string }> {
  const teamId = requireTeam(client)
  const registry = await useTableRegistry()
  const params: unknown[] = [teamId]
  const where = ['r.team_id = $1', ...filterSql(query.filters, params)]
  const filterParams = [...params]
  const filterWhere = where.join(' and ')
  if (query.cursor) where.push(afterSql(query, params))
  const orderBy = orderSql(query.order)
  const keyColumns = query.order.map((o, i) => `r.${quoteIdent(o.column.name)}::text as "__key${i}"`)
  params.push(query.limit, query.cursor ? 0 : query.offset)
  const extra = [...keyColumns, ...embedColumns(query.select)]
  const select = (await cachedSelectTemplate(table, registry)).replace(' from %SOURCE% r', `, ${extra.join(', ')} from public.${quoteIdent(table.name)} r`)
  const sql = `${select} where ${where.join(' and ')} order by ${orderBy} limit $${params.length - 1} offset $${params.length}`
  const countExactly = async () => {
    const { rows } = await client.read<{ total: number, before: number }>(
      `select count(*)::int as total${query.cursor ? `, count(*) filter (where not ${afterSql(query, [...filterParams])})::int as before` : ''}
       from public.${quoteIdent(table.name)} r where ${filterWhere}`,
      query.cursor ? [...filterParams, ...query.cursor.filter(value => value !== null)] : filterParams,
    )
    return rows[0]!
  }
  const countRows = async (): Promise<{ total: number, before?: number } | null> => {
    if (!query.count) return null
    if (query.count === 'exact') return countExactly()
    const planned = await plannedCount(client, table, filterWhere, filterParams)
    return query.count === 'estimated' && planned <= estimatedExactUpTo ? countExactly() : { total: planned }
  }
  // the page goes straight into the answer: its timestamps are read as the ISO text JSON prints
  // (as arrays of values, which the answer's objects are then made from in one go)
  const [page, count] = await readErrors(() => Promise.all([client.read<unknown[]>(sql, params, { isoTimestamps: true, arrayRows: true }), countRows()]))
  const fields = page.fields ?? []
  const rows = shapeArrayRows(table, registry, query.select, fields, page.rows)
  const last = page.rows.at(-1)
  const valueOf = (row: unknown[], name: string) => row[fields.lastIndexOf(name)] ?? null
  const next = last && rows.length === query.limit ? encodeCursor(cursorScope(table, query), [...query.order.map((_, i) => valueOf(last, `__key${i}`)), valueOf(last, 'id')]) : null
  // 0-based positions of the page (unknown on a cursor page without a count) and the total when counted
  const first = query.cursor ? count?.before ?? null : query.offset
  // a planned or estimated total is never less than the rows this page has shown to exist
  const total = count ? String(Math.max(count.total, (first ?? 0) + rows.length)) : '*'
  const range = rows.length && first !== null ? `${first}-${first + rows.length - 1}/${total}` : `*/${total}`
  return { rows, next, range }
}
/** The records of the given ids, in that order, as `select` asks (the answer of a write under `return=representation`). */
export async function representRecords(db: Pick<Queryable, 'query'>, table: TableInfo, teamId: string, ids: string[], select: SelectItem[] | null, order?: RecordQuery['order']): Promise<DataRecord[]> {
  const registry = await useTableRegistry()
  const extra = embedColumns(select)
  const template = (await cachedSelectTemplate(table, registry)).replace(' from %SOURCE% r', `${extra.length ? `, ${extra.join(', ')}` : ''} from public.${quoteIdent(table.name)} r`)
  const orderBy = order ? ` order by ${orderSql(order)}` : ''
  const { rows } = await db.query<DataRecord>(`${template} where r.team_id = $1 and r.id = any($2::uuid[])${orderBy}`, [teamId, ids])
  if (order) return shapeRows(table, registry, select, rows)
  const byId = new Map(rows.map(row => [row.id as string, row]))
  return shapeRows(table, registry, select, ids.map(id => byId.get(id)).filter((row): row is DataRecord => row !== undefined))
}
