import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'
import type { H3Event } from 'h3'
import { uuidPattern } from '#shared/utils/patterns'
import type { AuditedClient } from './audited-client'
import { rejectUnstorable } from './validation'
import { cachedSelectTemplate, joinedNames, updateRecord, deleteRecord, type RecordGuard } from './records'
import { quoteIdent, type ColumnInfo, type TableInfo } from './table-registry'
import type { DataRecord } from '#shared/types/data'

/** A list request over a domain table: filters, order, page size and a cursor or an offset. */
export interface RecordQuery {
  filters: { column: ColumnInfo, op: string, negate: boolean, value: string | string[] | null }[]
  order: { column: ColumnInfo, direction: 'asc' | 'desc' }[]
  limit: number
  offset: number
  cursor: unknown[] | null
  countExact: boolean
  /** The columns to answer (plus the joined names of selected foreign keys); null: all. */
  select: string[] | null
}

const operators = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'in', 'is'])
const reservedParams = new Set(['limit', 'offset', 'order', 'cursor', 'select'])
const bad = (message: string) => createError({ statusCode: 400, statusMessage: message })

/** Whether a text is a valid value of the column's type (checked before it reaches the database). */
function isValidValue(column: ColumnInfo, text: string): boolean {
  const type = column.type
  if (column.allowedValues) return column.allowedValues.includes(text)
  if (type === 'uuid') return uuidPattern.test(text)
  if (['integer', 'smallint', 'bigint'].includes(type)) return /^-?\d{1,18}$/.test(text)
  if (/^(numeric|real|double precision)/.test(type)) return text.trim() !== '' && Number.isFinite(Number(text))
  if (type === 'boolean') return text === 'true' || text === 'false'
  if (type === 'date') return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text))
  if (type.startsWith('timestamp')) return !Number.isNaN(Date.parse(text))
  return true
}

let derivedKey: { secret: string, key: Buffer } | undefined
/** The key that signs cursors, derived from the app secret (once per secret: HKDF is not free). */
function cursorKey(): Buffer {
  const secret = setting('appSecret') || useRuntimeConfig().session.password || process.env.NUXT_SESSION_PASSWORD
  if (!secret) throw new Error('Neither APP_SECRET nor a session password is set')
  if (derivedKey?.secret !== secret) derivedKey = { secret, key: Buffer.from(hkdfSync('sha256', secret, 'team-workspace', 'record-cursor', 32)) }
  return derivedKey.key
}

/** A signed, opaque cursor of the last row's order values and id, bound to the table and order. */
function encodeCursor(scope: string, values: unknown[]): string {
  const payload = Buffer.from(JSON.stringify(values)).toString('base64url')
  const signature = createHmac('sha256', cursorKey()).update(`${scope}.${payload}`).digest('base64url')
  return `${payload}.${signature}`
}

function decodeCursor(scope: string, cursor: string): unknown[] {
  const [payload, signature] = cursor.split('.')
  if (!payload || !signature) throw bad('cursor: is malformed')
  const expected = createHmac('sha256', cursorKey()).update(`${scope}.${payload}`).digest()
  const given = Buffer.from(signature, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad('cursor: is not valid for this list (forged, or made for other filters or order)')
  const values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown
  if (!Array.isArray(values)) throw bad('cursor: is malformed')
  return values
}

const integer = (name: string, text: string | undefined, min: number, max: number, fallback: number) => {
  if (text === undefined) return fallback
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw bad(`${name}: must be an integer from ${min} to ${max}`)
  return Number(text)
}

/** Reads filters (`col=op.value`), `order`, `limit`, `offset` and `cursor` from a query; 400 naming what is wrong. */
export function parseRecordQuery(table: TableInfo, query: Record<string, unknown>, prefer?: string): RecordQuery {
  rejectUnstorable(query)
  const single = (key: string) => {
    const value = query[key]
    if (Array.isArray(value)) throw bad(`${key}: give it once`)
    return value === undefined ? undefined : String(value)
  }
  const filters: RecordQuery['filters'] = []
  for (const [key, raw] of Object.entries(query)) {
    if (reservedParams.has(key)) continue
    const column = table.columns.find(c => c.name === key)
    if (!column) throw bad(`${key}: is not a column of ${table.name}`)
    for (const text of ([] as unknown[]).concat(raw).map(String)) {
      const negate = text.startsWith('not.')
      const rest = negate ? text.slice(4) : text
      const dot = rest.indexOf('.')
      const op = dot < 0 ? rest : rest.slice(0, dot)
      const value = dot < 0 ? '' : rest.slice(dot + 1)
      if (!operators.has(op)) throw bad(`${key}: unknown operator "${op.slice(0, 20)}" (use eq, neq, gt, gte, lt, lte, like, ilike, in, is, or not.<op>)`)
      if (op === 'is') {
        if (!['null', 'true', 'false'].includes(value)) throw bad(`${key}: is takes null, true or false`)
        if (value !== 'null' && column.type !== 'boolean') throw bad(`${key}: is.${value} needs a boolean column`)
        filters.push({ column, op, negate, value })
      }
      else if (op === 'in') {
        const list = /^\((.*)\)$/.exec(value)?.[1]
        if (list === undefined) throw bad(`${key}: in takes a list, e.g. in.(a,b)`)
        const items = list.split(',').map(item => item.trim().replace(/^"(.*)"$/, '$1'))
        const invalid = items.find(item => !isValidValue(column, item))
        if (invalid !== undefined) throw bad(`${key}: "${invalid.slice(0, 40)}" is not a valid ${column.allowedValues ? `value (one of: ${column.allowedValues.join(', ')})` : column.type}`)
        filters.push({ column, op, negate, value: items })
      }
      else if (op === 'like' || op === 'ilike') {
        filters.push({ column, op, negate, value: value.replace(/[%_\\]/g, m => `\\${m}`).replace(/\*/g, '%') })
      }
      else {
        if (!isValidValue(column, value)) throw bad(`${key}: "${value.slice(0, 40)}" is not a valid ${column.allowedValues ? `value (one of: ${column.allowedValues.join(', ')})` : column.type}`)
        filters.push({ column, op, negate, value })
      }
    }
  }
  const orderText = single('order') ?? 'created_at.desc'
  const order = orderText.split(',').map((part) => {
    const [name, direction = 'asc', extra] = part.split('.')
    const column = table.columns.find(c => c.name === name)
    if (!column) throw bad(`order: ${name} is not a column of ${table.name}`)
    if ((direction !== 'asc' && direction !== 'desc') || extra !== undefined) throw bad(`order: ${part} must be <column>.asc or <column>.desc`)
    return { column, direction } as const
  })
  const selectText = single('select')
  const select = selectText === undefined ? null : selectText.split(',').map(name => name.trim())
  for (const name of select ?? []) {
    if (!table.columns.some(c => c.name === name)) throw bad(`select: ${name ? `"${name.slice(0, 63)}" is not a column of ${table.name}` : 'name columns separated by commas'}`)
  }
  const cursorText = single('cursor')
  const offsetText = single('offset')
  if (cursorText && offsetText) throw bad('cursor: give a cursor or an offset, not both')
  const scope = `${table.name}:${JSON.stringify(order.map(o => [o.column.name, o.direction]))}:${JSON.stringify(filters.map(f => [f.column.name, f.op, f.negate, f.value]))}`
  return {
    filters,
    order,
    limit: integer('limit', single('limit'), 1, 100, 50),
    offset: integer('offset', offsetText, 0, Number.MAX_SAFE_INTEGER, 0),
    cursor: cursorText ? decodeCursor(scope, cursorText) : null,
    countExact: /(^|[,;\s])count=exact\b/.test(prefer ?? ''),
    select,
  }
}

const comparators: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }

/** The where clause of the filters; params continue after `params`. */
function filterSql(query: RecordQuery, params: unknown[]): string[] {
  return query.filters.map(({ column, op, negate, value }) => {
    const col = `r.${quoteIdent(column.name)}`
    let condition: string
    if (op === 'is') condition = value === 'null' ? `${col} is null` : `${col} is ${value}`
    else if (op === 'in') {
      params.push(value)
      condition = `${col}::text = any($${params.length}::text[])`
    }
    else if (op === 'like' || op === 'ilike') {
      params.push(value)
      condition = `${col}::text ${op} $${params.length}`
    }
    else {
      params.push(value)
      condition = `${col} ${comparators[op]} $${params.length}::${column.type}`
    }
    return negate ? `not (${condition})` : condition
  })
}

/** "Strictly after the cursor row" in the list's order (nulls last in both directions), the id breaking ties. */
function afterSql(query: RecordQuery, params: unknown[]): string {
  const keys = [...query.order.map(o => ({ column: o.column, direction: o.direction })), { column: { name: 'id', type: 'uuid' } as ColumnInfo, direction: query.order.at(-1)!.direction }]
  const cursor = query.cursor!
  if (cursor.length !== keys.length) throw bad('cursor: is malformed')
  const equal: string[] = []
  const alternatives: string[] = []
  let firstParam = ''
  keys.forEach((key, i) => {
    const col = `r.${quoteIdent(key.column.name)}`
    const value = cursor[i]
    let after: string
    let same: string
    if (value === null) {
      after = 'false'
      same = `${col} is null`
    }
    else {
      params.push(value)
      const param = `$${params.length}::${key.column.type}`
      if (i === 0) firstParam = param
      after = `(${col} ${key.direction === 'asc' ? '>' : '<'} ${param} or ${col} is null)`
      same = `${col} = ${param}`
    }
    alternatives.push([...equal, after].join(' and '))
    equal.push(same)
  })
  // The same condition again as a plain bound on the first key, which an index on it can seek to
  // (the alternatives above, joined by or, cannot), so a page deep in a long list costs what the first does.
  const first = keys[0]!
  const firstColumn = `r.${quoteIdent(first.column.name)}`
  const bound = cursor[0] === null
    ? `${firstColumn} is null`
    : first.column.nullable ? null : `${firstColumn} ${first.direction === 'asc' ? '>=' : '<='} ${firstParam}`
  return `(${bound ? `${bound} and ` : ''}(${alternatives.map(a => `(${a})`).join(' or ')}))`
}

/** The keys a list answers for a `select`: the chosen columns and the joined names of chosen foreign keys; null: all. */
function answeredColumns(table: TableInfo, registry: Map<string, TableInfo>, select: string[] | null): Set<string> | null {
  if (!select) return null
  const names = joinedNames(table, registry).filter(join => select.includes(join.column)).map(join => join.alias)
  return new Set([...select, ...names])
}

/** A page of the team's records with the joined names, plus the next cursor when the page is full and the total when asked. */
export async function queryRecords(client: AuditedClient, table: TableInfo, query: RecordQuery): Promise<{ rows: DataRecord[], next: string | null, range: string | null }> {
  const teamId = client.context.teamId
  if (!teamId) throw createError({ statusCode: 500, statusMessage: 'The client is not bound to a team' })
  const registry = await useTableRegistry()
  const params: unknown[] = [teamId]
  const where = ['r.team_id = $1', ...filterSql(query, params)]
  const filterParams = [...params]
  const filterWhere = where.join(' and ')
  if (query.cursor) where.push(afterSql(query, params))
  // nulls last only where a column may hold nulls: on a not-null column the plain order matches its index
  const orderBy = [...query.order.map(o => `r.${quoteIdent(o.column.name)} ${o.direction}${o.column.nullable ? ' nulls last' : ''}`), `r.id ${query.order.at(-1)!.direction}`].join(', ')
  const keyColumns = query.order.map((o, i) => `r.${quoteIdent(o.column.name)}::text as "__key${i}"`)
  params.push(query.limit, query.cursor ? 0 : query.offset)
  const select = (await cachedSelectTemplate(table, registry)).replace(' from %SOURCE% r', `, ${keyColumns.join(', ')} from public.${quoteIdent(table.name)} r`)
  const sql = `${select} where ${where.join(' and ')} order by ${orderBy} limit $${params.length - 1} offset $${params.length}`
  const [page, count] = await Promise.all([
    client.read<DataRecord>(sql, params),
    query.countExact
      ? client.read<{ total: number, before: number }>(
          `select count(*)::int as total${query.cursor ? `, count(*) filter (where not ${afterSql(query, filterParams)})::int as before` : ''}
           from public.${quoteIdent(table.name)} r where ${filterWhere}`,
          filterParams,
        )
      : null,
  ])
  const answered = answeredColumns(table, registry, query.select)
  // the keys to answer, chosen once from the first row (every row has the same), then copied row by row
  const keys = page.rows[0] ? Object.keys(page.rows[0]).filter(key => answered ? answered.has(key) : !key.startsWith('__key')) : []
  const rows = page.rows.map((row) => {
    const answer: DataRecord = {}
    for (const key of keys) answer[key] = row[key]
    return answer
  })
  const last = page.rows.at(-1)
  const scope = `${table.name}:${JSON.stringify(query.order.map(o => [o.column.name, o.direction]))}:${JSON.stringify(query.filters.map(f => [f.column.name, f.op, f.negate, f.value]))}`
  const next = last && rows.length === query.limit ? encodeCursor(scope, [...query.order.map((_, i) => last[`__key${i}`] ?? null), last.id]) : null
  let range: string | null = null
  if (count) {
    const total = count.rows[0]!.total
    const first = query.cursor ? count.rows[0]!.before : query.offset
    range = rows.length ? `${first}-${first + rows.length - 1}/${total}` : `*/${total}`
  }
  return { rows, next, range }
}

/** A list answer with its Link (next page) and Content-Range headers. */
export async function answerRecordList(event: H3Event, client: AuditedClient, table: TableInfo): Promise<DataRecord[]> {
  const query = parseRecordQuery(table, getQuery(event), getRequestHeader(event, 'prefer'))
  const { rows, next, range } = await queryRecords(client, table, query)
  if (next) {
    // the same path and query, the offset replaced by the cursor
    const [pathname, search] = event.path.split('?', 2) as [string, string | undefined]
    const params = new URLSearchParams(search)
    params.delete('offset')
    params.set('cursor', next)
    setResponseHeader(event, 'link', `<${pathname}?${params}>; rel="next"`)
  }
  if (range) {
    setResponseHeader(event, 'content-range', range)
    setResponseHeader(event, 'preference-applied', 'count=exact')
  }
  return rows
}

/** The ETag of a record answer: a hash of its JSON. */
export function recordEtag(record: DataRecord): string {
  return `"${createHash('sha256').update(JSON.stringify(record)).digest('base64url').slice(0, 27)}"`
}

/** The guard of an `If-Match` write: 412 unless the record's current ETag is one named. */
function ifMatchGuard(event: H3Event): RecordGuard | undefined {
  const ifMatch = getRequestHeader(event, 'if-match')
  if (!ifMatch || ifMatch.trim() === '*') return undefined
  const tags = ifMatch.split(',').map(tag => tag.trim().replace(/^W\//, ''))
  return (current) => {
    if (!tags.includes(recordEtag(current))) {
      throw createError({ statusCode: 412, statusMessage: 'The record changed since you read it (If-Match does not match); read it again' })
    }
  }
}

/** GET one with its ETag; 304 for a matching If-None-Match. */
export async function answerRecord(event: H3Event, record: DataRecord): Promise<DataRecord | null> {
  const etag = recordEtag(record)
  setResponseHeader(event, 'etag', etag)
  if (getRequestHeader(event, 'if-none-match')?.split(',').map(t => t.trim()).includes(etag)) {
    setResponseStatus(event, 304)
    return null
  }
  return record
}

/**
 * PATCH honouring If-Match. The record is locked and checked in the write's own transaction, so of
 * two writers holding the same ETag one writes and the other gets 412.
 */
export async function updateRecordIfMatch(event: H3Event, client: AuditedClient, table: TableInfo, id: string, body: unknown): Promise<DataRecord> {
  const record = await updateRecord(client, table, id, body, ifMatchGuard(event))
  setResponseHeader(event, 'etag', recordEtag(record))
  return record
}

/** DELETE honouring If-Match, checked the same way. */
export async function deleteRecordIfMatch(event: H3Event, client: AuditedClient, table: TableInfo, id: string): Promise<void> {
  await deleteRecord(client, table, id, ifMatchGuard(event))
}
