import { hash } from 'node:crypto'
import type { H3Event } from 'h3'
import { LRUCache } from 'lru-cache'
import type { DataRecord } from '#shared/types/data'
import { csvField } from '../http/csv'
import { joinedNames } from '../records/record-sql'
import type { TableInfo } from '../records/table-registry'
import { apiError } from './errors'
import type { AnswerFormat } from './negotiate'
import { noPreferences, type Preferences } from './preferences'
import type { SelectItem } from './query'
import type { ApiRequest } from './request'
import { publicOrigin } from './routes'

/** How to build an answer from a row of the select template (its columns `fields`): pairs of the answer's key and the row's key. */
function answerKeys(table: TableInfo, registry: Map<string, TableInfo>, select: SelectItem[] | null, fields: string[]): [string, string][] {
  const rowKeys = fields.filter(key => !key.startsWith('__'))
  if (!select) return rowKeys.map(key => [key, key])
  const joins = joinedNames(table, registry)
  return select.flatMap((item, i): [string, string][] => {
    if (item.kind === 'star') return rowKeys.map(key => [key, key])
    if (item.kind === 'embed') return [[item.alias, `__embed${i}`]]
    const join = item.alias === item.column.name ? joins.find(j => j.column === item.column.name) : undefined
    return join ? [[item.alias, item.column.name], [join.alias, join.alias]] : [[item.alias, item.column.name]]
  })
}

/** Rows of the select template answered as the `select` asks. */
export function shapeRows(table: TableInfo, registry: Map<string, TableInfo>, select: SelectItem[] | null, rows: DataRecord[]): DataRecord[] {
  if (!rows[0]) return []
  const fields = Object.keys(rows[0])
  return shapeArrayRows(table, registry, select, fields, rows.map(row => fields.map(field => row[field])))
}

/** Rows of the select template read as arrays of the values of `fields`, answered as the `select` asks. */
export function shapeArrayRows(table: TableInfo, registry: Map<string, TableInfo>, select: SelectItem[] | null, fields: string[], rows: unknown[][]): DataRecord[] {
  if (!rows[0]) return []
  // a name twice among the columns answers the later one, as a row object would
  const build = rowBuilder(answerKeys(table, registry, select, fields).map(([key, from]) => [key, fields.lastIndexOf(from)]))
  return rows.map(build)
}

// aliases in `select` make the sets of keys open-ended: the 1000 used last are kept
const rowBuilders = new LRUCache<string, (row: unknown[]) => DataRecord>({ max: 1000 })

/**
 * A function that makes one answer object from an array row: an object literal with the answer's
 * keys, compiled once per set of keys. Every object of a page then has the same shape from its
 * start (which JSON.stringify walks fastest), and no object is made per row before it.
 */
function rowBuilder(keys: [string, number][]): (row: unknown[]) => DataRecord {
  const signature = JSON.stringify(keys)
  let build = rowBuilders.get(signature)
  if (!build) {
    // each key is written as a JSON string literal; a computed `__proto__` makes an own property, as an assignment would not
    const properties = keys.map(([key, index]) => `${key === '__proto__' ? `[${JSON.stringify(key)}]` : JSON.stringify(key)}: row[${index}]`)
    // the source is only quoted keys and numbers, made above
    build = new Function('row', `return { ${properties.join(', ')} }`) as (row: unknown[]) => DataRecord
    rowBuilders.set(signature, build)
  }
  return build
}
/**
 * Rows as CSV with a header line of their keys, each field written by the app's one CSV writer
 * (server/utils/http/csv.ts: quoted, formulas defused); lines as PostgREST writes them (LF between
 * them, none after the last), which is what supabase-js's csv() hands its caller.
 */
export function recordsCsv(rows: DataRecord[]): string {
  const keys = Object.keys(rows[0] ?? {})
  return [keys.map(csvField).join(','), ...rows.map(row => keys.map(key => csvField(row[key])).join(','))].join('\n')
}

/**
 * Rows in the format asked for: an array, one object (406 `PGRST116` unless exactly one row),
 * or CSV; `null` keys dropped under `nulls=stripped`.
 */
export function answerRows(event: H3Event, rows: DataRecord[], format: AnswerFormat): DataRecord[] | DataRecord | string {
  const shaped = format.stripNulls
    ? rows.map(row => Object.fromEntries(Object.entries(row).filter(([, value]) => value !== null)))
    : rows
  if (format.kind === 'object') {
    if (shaped.length !== 1) {
      throw apiError(406, 'JSON object requested, multiple (or no) rows returned', {
        code: 'PGRST116', details: `The result contains ${shaped.length} rows`,
      })
    }
    setResponseHeader(event, 'content-type', 'application/vnd.pgrst.object+json; charset=utf-8')
    return shaped[0]!
  }
  if (format.kind === 'csv') {
    setResponseHeader(event, 'content-type', 'text/csv; charset=utf-8')
    return recordsCsv(shaped)
  }
  return shaped
}

/** The ETag of a record answer: a hash of its JSON. */
export function recordEtag(record: DataRecord): string {
  return jsonEtag(JSON.stringify(record))
}

/** The ETag of a record already written as JSON (`recordEtag` without serialising it again). */
export function jsonEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url').slice(0, 27)}"`
}
/** GET one with its ETag; 304 for a matching If-None-Match; CSV or one object when asked. */
export function answerRecord(event: H3Event, request: ApiRequest, record: DataRecord): DataRecord | string | null {
  const format = request.format!
  const etag = recordEtag(record)
  setResponseHeader(event, 'etag', etag)
  if (request.ifNoneMatch?.split(',').map(t => t.trim()).includes(etag)) {
    setResponseStatus(event, 304)
    return null
  }
  return format.kind === 'array' ? record : answerRows(event, [record], format) as DataRecord | string
}

/** A list page in the format asked for, with its Link (next page, absolute), Content-Range and Preference-Applied headers. */
export function answerList(event: H3Event, request: ApiRequest, page: { rows: DataRecord[], next: string | null, range: string }) {
  if (page.next) {
    // the same path and query, the offset replaced by the cursor
    const [pathname, search] = event.path.split('?', 2) as [string, string | undefined]
    const params = new URLSearchParams(search)
    params.delete('offset')
    params.set('cursor', page.next)
    setResponseHeader(event, 'link', `<${publicOrigin(event)}${pathname}?${params}>; rel="next"`)
  }
  setResponseHeader(event, 'content-range', page.range)
  if (request.query!.count) setResponseHeader(event, 'preference-applied', `count=${request.query!.count}`)
  return answerRows(event, page.rows, request.format!)
}

const preferenceNames: Partial<Record<keyof Preferences, string>> = { maxAffected: 'max-affected' }
/** The Preference-Applied header: the preferences this answer honoured. */
function applyPreferences(event: H3Event, preferences: Preferences, applied: readonly (keyof Preferences)[]) {
  if (preferences === noPreferences) return
  const given = applied.filter(name => preferences[name] !== undefined).map(name => `${preferenceNames[name] ?? name}=${preferences[name]}`)
  if (given.length) setResponseHeader(event, 'preference-applied', given.join(', '))
}
const createApplied: readonly (keyof Preferences)[] = ['return', 'count', 'resolution', 'missing', 'tx']
const filteredWriteApplied: readonly (keyof Preferences)[] = ['return', 'count', 'tx', 'handling', 'maxAffected']

/** A POST of one record the short way: 201, the record serialised once, for its ETag and as the answer. */
export function answerCreatedRecord(event: H3Event, request: ApiRequest, record: DataRecord): string {
  applyPreferences(event, request.preferences, createApplied)
  setResponseStatus(event, 201)
  const json = JSON.stringify(record)
  setResponseHeader(event, 'etag', jsonEtag(json))
  setResponseHeader(event, 'content-type', 'application/json')
  return json
}

/**
 * Any other POST: 201; without `Prefer: return` the created record (or array) as it always was,
 * `return=representation` an array in the format asked for (as `select` asks), `return=minimal`
 * (and headers-only: this API answers no Location) nothing.
 */
export function answerCreated(event: H3Event, request: ApiRequest, rows: DataRecord[]) {
  const { preferences } = request
  applyPreferences(event, preferences, createApplied)
  setResponseStatus(event, 201)
  if (preferences.count) setResponseHeader(event, 'content-range', `*/${rows.length}`)
  if (preferences.return === 'minimal' || preferences.return === 'headers-only') return null
  if (request.format) return answerRows(event, rows, request.format)
  return request.bulk ? rows : rows[0] ?? null
}

/** PATCH or DELETE with filters: the changed records under `return=representation` (in the format asked for), else 204. */
export function answerFilteredWrite(event: H3Event, request: ApiRequest, rows: DataRecord[]) {
  const { preferences } = request
  const total = preferences.count ? String(rows.length) : '*'
  setResponseHeader(event, 'content-range', rows.length ? `0-${rows.length - 1}/${total}` : `*/${total}`)
  applyPreferences(event, preferences, filteredWriteApplied)
  if (!request.format) {
    setResponseStatus(event, 204)
    return null
  }
  return answerRows(event, rows, request.format)
}

/** PATCH of one record: the record with its new ETag. */
export function answerUpdatedRecord(event: H3Event, record: DataRecord): DataRecord {
  setResponseHeader(event, 'etag', recordEtag(record))
  return record
}

/** DELETE of one record: 204. */
export function answerDeleted(event: H3Event): null {
  setResponseStatus(event, 204)
  return null
}
