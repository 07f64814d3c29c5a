// Reading: a table request read once, whole, into one value (`ApiRequest`) before anything is
// planned or run, as PostgREST reads its ApiRequest. Each action reads only what it uses, in the
// order below, so a request with a problem gets the same 4xx whichever it is.
import type { H3Event } from 'h3'
import { requestHeader } from '../http/request'
import { maxBulkRecords } from '../records/records'
import { type TableInfo, useTableRegistry } from '../records/table-registry'
import { readJsonBody, readValidBody, rejectUnstorable } from '../validation'
import { apiError, badRequest as bad } from './errors'
import { acceptedFormat, type AnswerFormat } from './negotiate'
import { noPreferences, parsePreferences, type Preferences } from './preferences'
import type { FilterNode, QueryAccess, RecordQuery, SelectItem } from './query'
import { columnOf, parseRecordQuery, parseSelect, unquote } from './query-params'
import { RecordBody, requireRecordId } from './routes'

/**
 * What a request does to a table: `list` (GET, HEAD /{table}), `one` (GET /{table}/{id}), `create`
 * (POST), `update` and `delete` (PATCH, DELETE /{table}?<filters>), `updateOne` and `deleteOne`
 * (PATCH, DELETE /{table}/{id}).
 */
export type TableAction = 'list' | 'one' | 'create' | 'update' | 'delete' | 'updateOne' | 'deleteOne'

/** A request as read: everything planning, running and answering it need from the request. */
export interface ApiRequest {
  action: TableAction
  table: TableInfo
  /** The record of `/{table}/{id}`. */
  id: string | null
  /** `Idempotency-Key` (a key's writes only). */
  idempotencyKey: string | undefined
  /** `Prefer` (not read by `one`). */
  preferences: Preferences
  /** The answer's format from `Accept`; null: the answer has no rows to format (a write without `return=representation`). */
  format: AnswerFormat | null
  /** `select` of a write's answer (a list's is in `query`). */
  select: SelectItem[] | null
  /** A list's filters, order, page, count and `select`. */
  query: RecordQuery | null
  /** The filters of a PATCH or DELETE on a table, and the order of its answer if given. */
  filters: FilterNode[]
  order: RecordQuery['order'] | undefined
  /** A POST's records (`columns` applied) and whether it sent an array. */
  records: unknown[]
  bulk: boolean
  /** A PATCH's changes. */
  changes: Record<string, unknown> | null
  ifMatch: string | undefined
  ifNoneMatch: string | undefined
}

const noFilters: FilterNode[] = []
const noRecords: unknown[] = []

/**
 * Reads a request on `table` for `action`: its headers, query string and body, each once; a 4xx
 * for what cannot be read. `apiKeyId`: the key whose Idempotency-Key is honoured (none for the
 * app's own pages, which do not read it).
 */
export async function readApiRequest(event: H3Event, action: TableAction, table: TableInfo, access: QueryAccess, apiKeyId: string | undefined): Promise<ApiRequest> {
  const request: ApiRequest = {
    action, table, id: null, idempotencyKey: undefined, preferences: noPreferences, format: null, select: null, query: null,
    filters: noFilters, order: undefined, records: noRecords, bulk: false, changes: null, ifMatch: undefined, ifNoneMatch: undefined,
  }
  if (action === 'list') {
    request.format = acceptedFormat(requestHeader(event, 'accept'))
    request.preferences = parsePreferences(requestHeader(event, 'prefer'))
    const query = getQuery(event)
    // PostgREST's older paging: `Range: 20-39` (items), when the query string does not page itself
    const range = /^(?:items=)?(\d{1,15})-(\d{0,15})$/.exec(requestHeader(event, 'range')?.trim() ?? '')
    if (range && query.offset === undefined && query.limit === undefined && query.cursor === undefined) {
      if (range[2] && Number(range[2]) < Number(range[1])) {
        throw apiError(416, `Requested range not satisfiable: Range ${range[1]}-${range[2]} ends before it starts`, {
          code: 'PGRST103', hint: 'Give a range first-last with last at least first, e.g. Range: 0-9',
        })
      }
      query.offset = range[1]
      if (range[2]) query.limit = String(Math.max(Number(range[2]) - Number(range[1]) + 1, 1))
    }
    // filters, `or`/`and`, `order`, `limit`/`offset`/`cursor`, `select`, and `Prefer: count=…`
    request.query = parseRecordQuery(table, query, await useTableRegistry(), { ...access, count: request.preferences.count })
    return request
  }
  if (action === 'one') {
    request.id = requireRecordId(event, table)
    request.format = acceptedFormat(requestHeader(event, 'accept'))
    request.ifNoneMatch = requestHeader(event, 'if-none-match')
    return request
  }
  if (action === 'updateOne' || action === 'deleteOne') request.id = requireRecordId(event, table)
  if (apiKeyId !== undefined) request.idempotencyKey = readIdempotencyKey(event)
  if (action === 'updateOne') request.changes = await readValidBody(event, RecordBody)
  const preferences = request.preferences = parsePreferences(requestHeader(event, 'prefer'))
  if (action === 'updateOne' || action === 'deleteOne') {
    request.ifMatch = requestHeader(event, 'if-match')
    return request
  }
  const query = getQuery(event)
  if (action === 'create') {
    rejectUnstorable(query)
    const unexpected = Object.keys(query).find(key => key !== 'select' && key !== 'columns' && key !== 'on_conflict')
    if (unexpected) throw bad(`${unexpected.slice(0, 63)}: POST takes no filters (only select, columns and on_conflict)`)
    if (Array.isArray(query.select)) throw bad('select: give it once')
    if (query.select !== undefined) request.select = parseSelect(table, String(query.select), await useTableRegistry(), access)
    if (preferences.return === 'representation') request.format = acceptedFormat(requestHeader(event, 'accept'))
    const body = await readJsonBody(event, { allowArray: true })
    request.bulk = Array.isArray(body)
    request.records = applyColumns(table, query.columns, Array.isArray(body) ? body : [body], preferences)
    if (request.records.length < 1 || request.records.length > maxBulkRecords) throw apiError(400, `The array must hold 1 to ${maxBulkRecords} records`, { code: 'PGRST102' })
    if (preferences.resolution) requireConflictTarget(table, query.on_conflict)
    return request
  }
  // update, delete: filters (at least one), the answer's select and format, a PATCH's changes
  const registry = await useTableRegistry()
  const paging = ['limit', 'offset', 'cursor', 'columns', 'on_conflict'].find(key => query[key] !== undefined)
  if (paging) throw bad(`${paging}: is not supported on ${event.method}; filter the rows to change instead`)
  const { filters, order } = parseRecordQuery(table, { ...query, select: undefined }, registry)
  if (!filters.length) {
    throw apiError(400, `${event.method} on ${table.name} needs a filter (e.g. ?id=eq.<id>); a request without one would change every row`, {
      code: 'PGRST100', hint: `Add a filter such as id=eq.<id>; at most ${maxFilteredWrite} rows change in one request`,
    })
  }
  request.filters = filters
  if (query.order !== undefined) request.order = order
  if (query.select !== undefined) request.select = parseSelect(table, String(query.select), registry, access)
  if (preferences.return === 'representation') request.format = acceptedFormat(requestHeader(event, 'accept'))
  if (action === 'update') request.changes = await readJsonBody(event)
  return request
}

/** The most rows one PATCH or DELETE with filters may change: more is a 400 that changes nothing. */
export const maxFilteredWrite = 100

/** `Idempotency-Key`: 1 to 255 characters when given. */
function readIdempotencyKey(event: H3Event): string | undefined {
  const key = requestHeader(event, 'idempotency-key')
  if (key !== undefined && (key.length < 1 || key.length > 255)) throw createError({ statusCode: 400, statusMessage: 'Idempotency-Key: must be 1 to 255 characters' })
  return key
}

/**
 * `columns=a,b` (what supabase-js sends with an array): the columns each record sets, a column a
 * record lacks being null unless `Prefer: missing=default`, as PostgREST does.
 */
function applyColumns(table: TableInfo, text: unknown, records: unknown[], preferences: Preferences): unknown[] {
  if (text === undefined) return records
  const names = String(text).split(',').map(name => unquote(name.trim()))
  for (const name of names) if (name !== 'id') columnOf(table, name, `columns: ${name.slice(0, 63)}`)
  if (preferences.missing === 'default') return records
  return records.map(record => record && typeof record === 'object' && !Array.isArray(record)
    ? { ...Object.fromEntries(names.filter(name => name !== 'id' && !(name in record)).map(name => [name, null])), ...record }
    : record)
}

/** `on_conflict`: the unique columns of an upsert; the primary key `id` is the one this API has. */
function requireConflictTarget(table: TableInfo, text: unknown): void {
  if (text === undefined) return
  const names = String(text).split(',').map(name => unquote(name.trim()))
  if (names.length !== 1 || names[0] !== 'id') {
    throw apiError(400, `on_conflict: (${names.join(', ').slice(0, 100)}) is not a unique key of ${table.name}; use id`, { code: '42P10' })
  }
}
