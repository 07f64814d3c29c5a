import type { H3Event } from 'h3'
import type { DataRecord } from '#shared/types/data'
import { requireTeam, type AuditedClient } from '../db/audited-client'
import type { Queryable } from '../db/db-drivers'
import { readJsonBody, rejectUnstorable } from '../validation'
import {
  createRecord, createRecords, deleteRecord, deleteRecords, inWriteTransaction,
  maxBulkRecords, updateRecord, updateRecords, upsertRecords, type RecordGuard,
} from '../records/records'
import { quoteIdent, type TableInfo, useTableRegistry } from '../records/table-registry'
import { answerRows, jsonEtag, recordEtag } from './answer'
import { apiError, badRequest as bad, readErrors } from './errors'
import { acceptedFormat } from './negotiate'
import { applyPreferences, readPreferences, type Preferences } from './preferences'
import { columnOf, parseRecordQuery, parseSelect, unquote } from './query-params'
import type { FilterNode, QueryAccess, RecordQuery, SelectItem } from './query'
import { representRecords } from './read'
import { filterSql } from './sql'
import { requestHeader } from '../http/request'

/** `return=representation`: the written rows as `select` asks, read in the write's own transaction. */
function representation(table: TableInfo, teamId: string, select: SelectItem[] | null) {
  return (tx: Pick<Queryable, 'query'>, rows: DataRecord[]) =>
    select ? representRecords(tx, table, teamId, rows.map(row => row.id as string), select) : Promise.resolve(rows)
}

/** The `select` of a write's query string (only `select`, `columns` and `on_conflict` may be there on POST). */
async function writeSelect(event: H3Event, table: TableInfo, access: QueryAccess): Promise<SelectItem[] | null> {
  const query = getQuery(event)
  rejectUnstorable(query)
  const unexpected = Object.keys(query).find(key => !['select', 'columns', 'on_conflict'].includes(key))
  if (unexpected) throw bad(`${unexpected.slice(0, 63)}: POST takes no filters (only select, columns and on_conflict)`)
  const text = query.select
  if (text === undefined) return null
  if (Array.isArray(text)) throw bad('select: give it once')
  return parseSelect(table, String(text), await useTableRegistry(), access)
}

/**
 * `columns=a,b` (what supabase-js sends with an array): the columns each record sets, a column a
 * record lacks being null unless `Prefer: missing=default`, as PostgREST does.
 */
function applyColumns(event: H3Event, table: TableInfo, records: unknown[], preferences: Preferences): unknown[] {
  const text = getQuery(event).columns
  if (text === undefined) return records
  const names = String(text).split(',').map(name => unquote(name.trim()))
  for (const name of names) if (name !== 'id') columnOf(table, name, `columns: ${name.slice(0, 63)}`)
  if (preferences.missing === 'default') return records
  return records.map(record => record && typeof record === 'object' && !Array.isArray(record)
    ? { ...Object.fromEntries(names.filter(name => name !== 'id' && !(name in record)).map(name => [name, null])), ...record }
    : record)
}

/** `on_conflict`: the unique columns of an upsert; the primary key `id` is the one this API has. */
function conflictTarget(event: H3Event, table: TableInfo): void {
  const text = getQuery(event).on_conflict
  if (text === undefined) return
  const names = String(text).split(',').map(name => unquote(name.trim()))
  if (names.length !== 1 || names[0] !== 'id') {
    throw apiError(400, `on_conflict: (${names.join(', ').slice(0, 100)}) is not a unique key of ${table.name}; use id`, { code: '42P10' })
  }
}

/**
 * POST: one record or 1 to 100. Without `Prefer` it answers the created record (or array) as it
 * always has, the single one with its ETag; `return=representation` answers an array (as `select`
 * asks), `return=minimal` nothing; `resolution=…` upserts by id; `tx=rollback` writes nothing.
 */
export async function answerCreate(event: H3Event, client: AuditedClient, table: TableInfo, access: QueryAccess) {
  const preferences = readPreferences(event)
  const select = await writeSelect(event, table, access)
  const format = preferences.return === 'representation' ? acceptedFormat(event) : null
  const body = await readJsonBody(event, { allowArray: true })
  const records = applyColumns(event, table, Array.isArray(body) ? body : [body], preferences)
  if (records.length < 1 || records.length > maxBulkRecords) throw apiError(400, `The array must hold 1 to ${maxBulkRecords} records`, { code: 'PGRST102' })
  if (preferences.resolution) conflictTarget(event, table)
  applyPreferences(event, preferences, ['return', 'count', 'resolution', 'missing', 'tx'])
  setResponseStatus(event, 201)
  const plain = !preferences.return && !preferences.resolution && !preferences.tx && !select
  if (plain && !Array.isArray(body)) {
    // serialised once, for its ETag and as the answer
    const json = JSON.stringify(await createRecord(client, table, records[0]))
    setResponseHeader(event, 'etag', jsonEtag(json))
    setResponseHeader(event, 'content-type', 'application/json')
    return json
  }
  const options = { dryRun: preferences.tx === 'rollback', represent: representation(table, requireTeam(client), select) }
  const rows = preferences.resolution
    ? await upsertRecords(client, table, records, { ...options, ignoreDuplicates: preferences.resolution === 'ignore-duplicates' })
    : await createRecords(client, table, records, options)
  if (preferences.count) setResponseHeader(event, 'content-range', `*/${rows.length}`)
  // headers-only: this API answers no Location, so it is minimal
  if (preferences.return === 'minimal' || preferences.return === 'headers-only') return null
  if (format) return answerRows(event, rows, format)
  return Array.isArray(body) ? rows : rows[0] ?? null
}

/** The filters of a PATCH or DELETE on a table (at least one, and no paging) and the order of its answer, if given. */
function writeFilters(event: H3Event, table: TableInfo, registry: Map<string, TableInfo>): { filters: FilterNode[], order?: RecordQuery['order'] } {
  const query = getQuery(event)
  const paging = ['limit', 'offset', 'cursor', 'columns', 'on_conflict'].find(key => query[key] !== undefined)
  if (paging) throw bad(`${paging}: is not supported on ${event.method}; filter the rows to change instead`)
  const { filters, order } = parseRecordQuery(table, { ...query, select: undefined }, registry)
  if (!filters.length) {
    throw apiError(400, `${event.method} on ${table.name} needs a filter (e.g. ?id=eq.<id>); a request without one would change every row`, {
      code: 'PGRST100', hint: `Add a filter such as id=eq.<id>; at most ${maxFilteredWrite} rows change in one request`,
    })
  }
  return { filters, order: query.order === undefined ? undefined : order }
}

/** The most rows one PATCH or DELETE with filters may change: more is a 400 that changes nothing. */
export const maxFilteredWrite = 100

/**
 * Locks the team's rows matching the filters (at most the bound plus one) and refuses, before
 * anything changes, more than `maxFilteredWrite` of them or more than `max-affected` under `handling=strict`.
 */
async function lockMatching(tx: Queryable, table: TableInfo, teamId: string, filters: FilterNode[], preferences: Preferences): Promise<string[]> {
  const params: unknown[] = [teamId]
  const where = ['r.team_id = $1', ...filterSql(filters, params)]
  params.push(maxFilteredWrite + 1)
  const { rows } = await readErrors(() => tx.query<{ id: string }>(
    `select r.id from public.${quoteIdent(table.name)} r where ${where.join(' and ')} order by r.id limit $${params.length} for update of r`, params))
  if (rows.length > maxFilteredWrite) {
    throw apiError(400, `More than ${maxFilteredWrite} ${table.name} records match; nothing was changed`, {
      code: 'PGRST124', hint: `Narrow the filters: one request changes at most ${maxFilteredWrite} rows`,
    })
  }
  if (preferences.handling === 'strict' && preferences.maxAffected !== undefined && rows.length > preferences.maxAffected) {
    throw apiError(400, `Query result exceeds max-affected preference constraint: ${rows.length} rows match, max-affected is ${preferences.maxAffected}; nothing was changed`, { code: 'PGRST124' })
  }
  return rows.map(row => row.id)
}

/** PATCH or DELETE with filters: the changed records under `return=representation` (as `select` asks), else 204. */
export async function answerFilteredWrite(event: H3Event, client: AuditedClient, table: TableInfo, access: QueryAccess) {
  const preferences = readPreferences(event)
  const registry = await useTableRegistry()
  const { filters, order } = writeFilters(event, table, registry)
  const selectText = getQuery(event).select
  const select = selectText === undefined ? null : parseSelect(table, String(selectText), registry, access)
  const format = preferences.return === 'representation' ? acceptedFormat(event) : null
  const input = event.method === 'PATCH' ? await readJsonBody(event) : null
  const teamId = requireTeam(client)
  const rows = await inWriteTransaction(client, preferences.tx === 'rollback', async (tx) => {
    const ids = await lockMatching(tx, table, teamId, filters, preferences)
    const before = format && event.method === 'DELETE' ? await representRecords(tx, table, teamId, ids, select, order) : null
    const written = input ? await updateRecords(tx, table, teamId, ids, input) : await deleteRecords(tx, table, teamId, ids)
    return before ?? (format ? representRecords(tx, table, teamId, written, select, order) : written.map(id => ({ id })))
  })
  const total = preferences.count ? String(rows.length) : '*'
  setResponseHeader(event, 'content-range', rows.length ? `0-${rows.length - 1}/${total}` : `*/${total}`)
  applyPreferences(event, preferences, ['return', 'count', 'tx', 'handling', 'maxAffected'])
  if (!format) {
    setResponseStatus(event, 204)
    return null
  }
  return answerRows(event, rows, format)
}

/** `Prefer: tx=rollback` on a route that cannot roll back is refused, never silently committed. */
function refuseDryRun(event: H3Event) {
  if (readPreferences(event).tx !== 'rollback') return
  throw apiError(400, `Prefer: tx=rollback is not supported on ${event.method} /{table}/{id}; use ${event.method} /{table}?id=eq.<id>, which supports it`, { code: 'PGRST122' })
}
/** The guard of an `If-Match` write: 412 unless the record's current ETag is one named. */
function ifMatchGuard(event: H3Event): RecordGuard | undefined {
  const ifMatch = requestHeader(event, 'if-match')
  if (!ifMatch || ifMatch.trim() === '*') return undefined
  const tags = ifMatch.split(',').map(tag => tag.trim().replace(/^W\//, ''))
  return (current) => {
    if (!tags.includes(recordEtag(current))) {
      throw createError({ statusCode: 412, statusMessage: 'The record changed since you read it (If-Match does not match); read it again' })
    }
  }
}
/**
 * PATCH honouring If-Match. The record is locked and checked in the write's own transaction, so of
 * two writers holding the same ETag one writes and the other gets 412.
 */
export async function updateRecordIfMatch(event: H3Event, client: AuditedClient, table: TableInfo, id: string, body: unknown): Promise<DataRecord> {
  refuseDryRun(event)
  const record = await updateRecord(client, table, id, body, ifMatchGuard(event))
  setResponseHeader(event, 'etag', recordEtag(record))
  return record
}

/** DELETE honouring If-Match, checked the same way. */
export async function deleteRecordIfMatch(event: H3Event, client: AuditedClient, table: TableInfo, id: string): Promise<void> {
  refuseDryRun(event)
  await deleteRecord(client, table, id, ifMatchGuard(event))
}
