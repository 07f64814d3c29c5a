import { createHmac, hash, hkdfSync, timingSafeEqual } from 'node:crypto'
import type { H3Event } from 'h3'
import { uuidPattern } from '#shared/utils/patterns'
import { requireTeam, type AuditedClient } from './audited-client'
import type { Queryable } from './db-drivers'
import { readJsonBody, rejectUnstorable } from './validation'
import {
  cachedSelectTemplate, createRecord, createRecords, deleteRecord, deleteRecords, inWriteTransaction, joinedNames,
  maxBulkRecords, updateRecord, updateRecords, upsertRecords, type RecordGuard,
} from './records'
import { acceptedFormat, answerRows, apiError, publicOrigin, readPreferences, type Preferences } from './public-api'
import { quoteIdent, type ColumnInfo, type TableInfo } from './table-registry'
import type { DataRecord } from '#shared/types/data'

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

/** The most rows one page answers: a larger `limit` is served as this many. */
export const maxPageRows = 100
/** `count=estimated` counts exactly up to this many rows, and answers the planner's estimate above it. */
const estimatedExactUpTo = 1000
/** How deep embeddings may nest (`projects(tasks(…))` is two). */
const maxEmbedDepth = 3

const operators = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch', 'in', 'is', 'isdistinct', 'fts', 'plfts', 'phfts', 'wfts'])
const textSearch: Record<string, string> = { fts: 'to_tsquery', plfts: 'plainto_tsquery', phfts: 'phraseto_tsquery', wfts: 'websearch_to_tsquery' }
const reservedParams = new Set(['limit', 'offset', 'order', 'cursor', 'select', 'columns', 'on_conflict'])
const logicParams = new Set(['or', 'and', 'not.or', 'not.and'])
const bad = (message: string, code = 'PGRST100') => apiError(400, message, { code })

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

const isTextColumn = (column: ColumnInfo) => column.type === 'text' || column.type.startsWith('character')

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

/** What a cursor is bound to: the table, the order and the filters. */
function cursorScope(table: TableInfo, query: Pick<RecordQuery, 'order' | 'filters'>): string {
  const filters = JSON.stringify(query.filters, (key, value: unknown) => key === 'column' ? (value as ColumnInfo).name : value)
  return `${table.name}:${JSON.stringify(query.order.map(o => [o.column.name, o.direction, o.nulls]))}:${filters}`
}

const integer = (name: string, text: string | undefined, min: number, max: number, fallback: number, what = `an integer from ${min} to ${max}`) => {
  if (text === undefined) return fallback
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw bad(`${name}: must be ${what}`, 'PGRST103')
  return Number(text)
}

/** Splits at the commas outside parentheses and double quotes; 400 for unbalanced ones. */
function splitTopLevel(text: string, name: string): string[] {
  const parts: string[] = []
  let depth = 0
  let quoted = false
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (char === '\\' && quoted) i++
    else if (char === '"') quoted = !quoted
    else if (quoted) continue
    else if (char === '(') depth++
    else if (char === ')' && --depth < 0) break
    else if (char === ',' && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  if (depth !== 0 || quoted) throw bad(`${name}: unbalanced parentheses or quotes`)
  parts.push(text.slice(start))
  return parts
}

/** A value in a logic tree or an `in` list without its double quotes. */
const unquote = (text: string) => /^"(.*)"$/s.exec(text)?.[1]?.replace(/\\(.)/g, '$1') ?? text

const columnOf = (table: TableInfo, name: string, where: string) => {
  const column = table.columns.find(c => c.name === name)
  if (!column) throw bad(`${where}: is not a column of ${table.name}`, '42703')
  return column
}

/** One condition `<op>.<value>` (or `not.<op>.<value>`) on a column; `quoted`: a value in a logic tree may be quoted. */
function parseCondition(column: ColumnInfo, key: string, text: string, quoted: boolean): Filter {
  const negate = text.startsWith('not.')
  const rest = negate ? text.slice(4) : text
  const dot = rest.indexOf('.')
  const opText = dot < 0 ? rest : rest.slice(0, dot)
  const raw = dot < 0 ? '' : rest.slice(dot + 1)
  const value = quoted ? unquote(raw) : raw
  const search = /^(fts|plfts|phfts|wfts)(?:\(([A-Za-z_][A-Za-z0-9_]*)\))?$/.exec(opText)
  const op = search ? search[1]! : opText
  if (!operators.has(op)) throw bad(`${key}: unknown operator "${opText.slice(0, 20)}" (use eq, neq, gt, gte, lt, lte, like, ilike, match, imatch, in, is, isdistinct, fts, plfts, phfts, wfts, or not.<op>)`)
  const invalid = (item: string) => bad(`${key}: "${item.slice(0, 40)}" is not a valid ${column.allowedValues ? `value (one of: ${column.allowedValues.join(', ')})` : column.type}`, '22P02')
  const filter = (filterValue: Filter['value'], config: string | null = null): Filter => ({ kind: 'filter', column, op, negate, value: filterValue, config })
  if (op === 'is') {
    if (!['null', 'true', 'false'].includes(value)) throw bad(`${key}: is takes null, true or false`)
    if (value !== 'null' && column.type !== 'boolean') throw bad(`${key}: is.${value} needs a boolean column`)
    return filter(value)
  }
  if (op === 'in') {
    const list = /^\((.*)\)$/s.exec(value)?.[1]
    if (list === undefined) throw bad(`${key}: in takes a list, e.g. in.(a,b)`)
    const items = splitTopLevel(list, key).map(item => unquote(item.trim()))
    const wrong = items.find(item => !isValidValue(column, item))
    if (wrong !== undefined) throw invalid(wrong)
    return filter(items)
  }
  // PostgREST's wildcards: * (as URLs cannot always carry %) and % itself; _ is one character
  if (op === 'like' || op === 'ilike') return filter(value.replace(/\*/g, '%'))
  if (op === 'match' || op === 'imatch') return filter(value)
  if (search) {
    if (!isTextColumn(column)) throw bad(`${key}: ${op} needs a text column`)
    return filter(value, search[2] ?? null)
  }
  if (!isValidValue(column, value)) throw invalid(value)
  return filter(value)
}

/** `or=(a.eq.1,and(b.gt.2,c.is.null))`: the tree of conditions. */
function parseLogic(table: TableInfo, key: string, text: string, depth = 0): FilterGroup {
  const group = /^(not\.)?(and|or)$/.exec(key)!
  const list = /^\((.*)\)$/s.exec(text)?.[1]
  if (list === undefined || !list.trim()) throw bad(`${key}: takes a list of conditions in parentheses, e.g. ${key}=(status.eq.done,priority.lt.3)`)
  if (depth > 10) throw bad(`${key}: nested too deep`)
  const children = splitTopLevel(list, key).map((item): FilterNode => {
    const part = item.trim()
    const nested = /^((?:not\.)?(?:and|or))(\(.*\))$/s.exec(part)
    if (nested) return parseLogic(table, nested[1]!, nested[2]!, depth + 1)
    const dot = part.indexOf('.')
    const name = dot < 0 ? part : part.slice(0, dot)
    return parseCondition(columnOf(table, name, `${key}: ${name.slice(0, 63)}`), `${key}: ${name}`, part.slice(dot + 1), true)
  })
  return { kind: 'group', logic: group[2] as 'and' | 'or', negate: Boolean(group[1]), children }
}

/** The relation an embedding names: by the target table (and an optional `!fk_column` hint) or by the parent's foreign-key column. */
function resolveEmbed(parent: TableInfo, name: string, hint: string | undefined, registry: Map<string, TableInfo>, access: QueryAccess): Omit<Embed, 'items'> {
  if (!access.canRead) throw bad(`select: embedding ${name} is available on the public API only`)
  if (parent.name === 'profiles') throw bad(`select: nothing can be embedded in profiles`, 'PGRST200')
  const fkColumn = parent.columns.find(c => c.name === name && c.references)
  const candidates: Omit<Embed, 'items'>[] = []
  if (fkColumn) {
    const target = registry.get(fkColumn.references!.table)
    if (target) candidates.push({ target, many: false, parentColumn: fkColumn.name, targetColumn: fkColumn.references!.column })
  }
  else {
    const target = registry.get(name)
    if (target) {
      for (const column of parent.columns) {
        if (column.references?.table === target.name && (!hint || hint === column.name)) candidates.push({ target, many: false, parentColumn: column.name, targetColumn: column.references.column })
      }
      for (const column of target.columns) {
        if (column.references?.table === parent.name && (!hint || hint === column.name)) candidates.push({ target, many: true, parentColumn: column.references.column, targetColumn: column.name })
      }
    }
  }
  const found = candidates.filter(c => c.target.isDomain || (c.target.name === 'profiles' && !c.many))
  if (!found.length) {
    throw apiError(400, `Could not find a relationship between ${parent.name} and ${name.slice(0, 63)}`, {
      code: 'PGRST200', hint: 'Embed a domain table linked by a foreign key, or profiles through a column such as created_by',
    })
  }
  if (found.length > 1) {
    throw apiError(300, `Could not embed because more than one relationship was found for ${parent.name} and ${name.slice(0, 63)}`, {
      code: 'PGRST201', hint: `Name the foreign key: ${found.map(c => `${name}!${c.many ? c.targetColumn : c.parentColumn}`).join(' or ')}`,
    })
  }
  const embed = found[0]!
  if (embed.target.isDomain && !access.canRead(embed.target.name)) {
    throw apiError(403, `This API key may not read ${embed.target.name} (its scopes lack read access to it), so it cannot embed it`, { code: '42501' })
  }
  return embed
}

/** The columns a `select` may name in a table: every column, but only `id` and `name` of profiles. */
const selectableColumns = (table: TableInfo) =>
  table.name === 'profiles' ? table.columns.filter(c => c.name === 'id' || c.name === 'name') : table.columns

/** Parses `select`: `*`, `column`, `alias:column`, `alias:table(items)`, `table!fk_column(items)`. */
function parseSelect(table: TableInfo, text: string, registry: Map<string, TableInfo>, access: QueryAccess, depth = 0): SelectItem[] {
  return splitTopLevel(text, 'select').map((part): SelectItem => {
    const item = part.trim()
    if (item === '*') return { kind: 'star' }
    const match = /^(?:([A-Za-z_][A-Za-z0-9_]*):)?([A-Za-z_][A-Za-z0-9_]*)(?:!([A-Za-z_][A-Za-z0-9_]*))?(?:\((.*)\))?$/s.exec(item)
    if (!match) {
      throw bad(`select: ${item ? `"${item.slice(0, 63)}" is not supported (name columns, alias:column, or an embedded table as table(columns))` : 'name columns separated by commas'}`)
    }
    const [, alias, name, hint, inner] = match as unknown as [string, string | undefined, string, string | undefined, string | undefined]
    if (inner === undefined) {
      if (hint) throw bad(`select: "${item.slice(0, 63)}": a !hint goes with an embedded table`)
      const column = selectableColumns(table).find(c => c.name === name)
      if (!column) throw bad(`select: "${name.slice(0, 63)}" is not a column of ${table.name}`, '42703')
      return { kind: 'column', column, alias: alias ?? name }
    }
    if (depth >= maxEmbedDepth) throw bad(`select: embeddings nest at most ${maxEmbedDepth} deep`)
    if (!inner.trim()) throw bad(`select: name the columns of ${name} to embed, e.g. ${name}(*)`)
    const relation = resolveEmbed(table, name, hint, registry, access)
    return { kind: 'embed', alias: alias ?? name, embed: { ...relation, items: parseSelect(relation.target, inner, registry, access, depth + 1) } }
  })
}

/**
 * Reads filters (`col=op.value`, `or=(…)`, `and=(…)`), `order`, `limit`, `offset`, `cursor` and
 * `select` from a query; 400 naming what is wrong. `count` is from `Prefer`.
 */
export function parseRecordQuery(table: TableInfo, query: Record<string, unknown>, registry: Map<string, TableInfo>, options: QueryAccess & { count?: RecordQuery['count'] } = {}): RecordQuery {
  rejectUnstorable(query)
  const single = (key: string) => {
    const value = query[key]
    if (Array.isArray(value)) throw bad(`${key}: give it once`)
    return value === undefined ? undefined : String(value)
  }
  const filters: FilterNode[] = []
  for (const [key, raw] of Object.entries(query)) {
    if (reservedParams.has(key)) continue
    const texts = ([] as unknown[]).concat(raw).map(String)
    if (logicParams.has(key)) {
      for (const text of texts) filters.push(parseLogic(table, key, text))
      continue
    }
    const column = columnOf(table, key, key)
    for (const text of texts) filters.push(parseCondition(column, key, text, false))
  }
  const orderText = single('order') ?? 'created_at.desc'
  const order = orderText.split(',').map((part) => {
    const [name = '', ...modifiers] = part.split('.')
    const column = table.columns.find(c => c.name === name)
    if (!column) throw bad(`order: ${name.slice(0, 63)} is not a column of ${table.name}`, '42703')
    const direction = modifiers[0] === 'asc' || modifiers[0] === 'desc' ? modifiers.shift() as 'asc' | 'desc' : 'asc'
    const nulls = modifiers[0] === 'nullsfirst' ? 'first' : modifiers[0] === 'nullslast' ? 'last' : null
    if (nulls) modifiers.shift()
    if (modifiers.length) throw bad(`order: ${part.slice(0, 63)} must be <column>[.asc|.desc][.nullsfirst|.nullslast]`)
    return { column, direction, nulls } as const
  })
  const selectText = single('select')
  const select = selectText === undefined ? null : parseSelect(table, selectText, registry, options)
  const cursorText = single('cursor')
  const offsetText = single('offset')
  if (cursorText && offsetText) throw bad('cursor: give a cursor or an offset, not both')
  const parsed = { filters, order }
  return {
    filters,
    order,
    limit: Math.min(integer('limit', single('limit'), 1, Number.MAX_SAFE_INTEGER, 50, `a positive integer (over ${maxPageRows} is served as ${maxPageRows})`), maxPageRows),
    offset: integer('offset', offsetText, 0, Number.MAX_SAFE_INTEGER, 0),
    cursor: cursorText ? decodeCursor(cursorScope(table, parsed), cursorText) : null,
    count: options.count ?? null,
    select,
  }
}

const comparators: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }

/** The SQL of one condition or group on rows `alias`; its values are pushed on `params`. */
function conditionSql(node: FilterNode, params: unknown[], alias: string): string {
  let condition: string
  if (node.kind === 'group') {
    condition = `(${node.children.map(child => conditionSql(child, params, alias)).join(` ${node.logic} `)})`
  }
  else {
    const { column, op, value, config } = node
    const col = `${alias}.${quoteIdent(column.name)}`
    const param = (v: unknown) => {
      params.push(v)
      return `$${params.length}`
    }
    if (op === 'is') condition = value === 'null' ? `${col} is null` : `${col} is ${value}`
    else if (op === 'in') condition = `${col}::text = any(${param(value)}::text[])`
    else if (op === 'like' || op === 'ilike') condition = `${col}::text ${op} ${param(value)}`
    else if (op === 'match' || op === 'imatch') condition = `${col}::text ${op === 'match' ? '~' : '~*'} ${param(value)}`
    else if (op === 'isdistinct') condition = `${col} is distinct from ${param(value)}::${column.type}`
    else if (textSearch[op]) {
      const configuration = config ? `${param(config)}::regconfig, ` : ''
      condition = `to_tsvector(${configuration}${col}) @@ ${textSearch[op]}(${configuration}${param(value)})`
    }
    else condition = `${col} ${comparators[op]} ${param(value)}::${column.type}`
  }
  return node.negate ? `not (${condition})` : condition
}

/** The where clause of the filters; params continue after `params`. */
function filterSql(filters: FilterNode[], params: unknown[], alias = 'r'): string[] {
  return filters.map(node => conditionSql(node, params, alias))
}

/** Where a key's nulls sort: as asked, else last (this API's default in both directions). */
const nullsFirst = (key: RecordQuery['order'][number]) => key.nulls === 'first'

/** "Strictly after the cursor row" in the list's order, nulls where the order puts them, the id breaking ties. */
function afterSql(query: RecordQuery, params: unknown[]): string {
  const keys = [...query.order, { column: { name: 'id', type: 'uuid', nullable: false } as ColumnInfo, direction: query.order.at(-1)!.direction, nulls: null }]
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
      after = nullsFirst(key) ? `${col} is not null` : 'false'
      same = `${col} is null`
    }
    else {
      params.push(value)
      const param = `$${params.length}::${key.column.type}`
      if (i === 0) firstParam = param
      const beyond = `${col} ${key.direction === 'asc' ? '>' : '<'} ${param}`
      after = nullsFirst(key) ? beyond : `(${beyond} or ${col} is null)`
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
    ? (nullsFirst(first) ? null : `${firstColumn} is null`)
    : first.column.nullable && !nullsFirst(first) ? null : `${firstColumn} ${first.direction === 'asc' ? '>=' : '<='} ${firstParam}`
  return `(${bound ? `${bound} and ` : ''}(${alternatives.map(a => `(${a})`).join(' or ')}))`
}

const literal = (text: string) => `'${text.replace(/'/g, '\'\'')}'`

/** The JSON of an embedded table for each row of `parent`: an object (many-to-one) or an array (one-to-many), team rows only. */
function embedSql(embed: Embed, parent: string, counter: { next: number }): string {
  const alias = `e${counter.next++}`
  const fields = embed.items.flatMap((item): string[] => {
    if (item.kind === 'star') return selectableColumns(embed.target).map(c => `${literal(c.name)}, ${alias}.${quoteIdent(c.name)}`)
    if (item.kind === 'column') return [`${literal(item.alias)}, ${alias}.${quoteIdent(item.column.name)}`]
    return [`${literal(item.alias)}, ${embedSql(item.embed, alias, counter)}`]
  })
  const object = `json_build_object(${fields.join(', ')})`
  const from = `public.${quoteIdent(embed.target.name)} ${alias}`
  const join = `${alias}.${quoteIdent(embed.targetColumn)} = ${parent}.${quoteIdent(embed.parentColumn)}${embed.target.isDomain ? ` and ${alias}.team_id = $1` : ''}`
  return embed.many
    ? `coalesce((select json_agg(${object} order by ${alias}.created_at desc, ${alias}.id desc) from ${from} where ${join}), '[]'::json)`
    : `(select ${object} from ${from} where ${join})`
}

/** The select list of a query's embeddings (`… as "__embed0"`), after the table's own columns. */
function embedColumns(select: SelectItem[] | null): string[] {
  const counter = { next: 0 }
  return (select ?? []).flatMap((item, i) => item.kind === 'embed' ? [`${embedSql(item.embed, 'r', counter)} as "__embed${i}"`] : [])
}

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
function shapeRows(table: TableInfo, registry: Map<string, TableInfo>, select: SelectItem[] | null, rows: DataRecord[]): DataRecord[] {
  if (!rows[0]) return []
  const fields = Object.keys(rows[0])
  return shapeArrayRows(table, registry, select, fields, rows.map(row => fields.map(field => row[field])))
}

/** Rows of the select template read as arrays of the values of `fields`, answered as the `select` asks. */
function shapeArrayRows(table: TableInfo, registry: Map<string, TableInfo>, select: SelectItem[] | null, fields: string[], rows: unknown[][]): DataRecord[] {
  if (!rows[0]) return []
  // a name twice among the columns answers the later one, as a row object would
  const build = rowBuilder(answerKeys(table, registry, select, fields).map(([key, from]) => [key, fields.lastIndexOf(from)]))
  return rows.map(build)
}

const rowBuilders = new Map<string, (row: unknown[]) => DataRecord>()

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
    // aliases in `select` make the sets of keys open-ended: the map stays bounded
    if (rowBuilders.size >= 1000) rowBuilders.clear()
    rowBuilders.set(signature, build)
  }
  return build
}

/** The order by of a list: nulls last by default, and only where a column may hold nulls (on a not-null column the plain order matches its index); the id breaks ties. */
function orderSql(order: RecordQuery['order']): string {
  return [...order.map(o => `r.${quoteIdent(o.column.name)} ${o.direction}${o.column.nullable ? ` nulls ${nullsFirst(o) ? 'first' : 'last'}` : ''}`), `r.id ${order.at(-1)!.direction}`].join(', ')
}

/** A database error a read's input caused (a text search or pattern the database cannot parse, an unknown configuration): a 400 with its SQLSTATE. */
async function readErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  }
  catch (error) {
    const { code, message } = (error ?? {}) as { code?: string, message?: string }
    if (code && /^(22|42601|42704|2201B)/.test(code)) throw apiError(400, `Invalid filter: ${message ?? code}`, { code })
    throw error
  }
}

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
  const total = count ? String(count.total) : '*'
  const range = rows.length && first !== null ? `${first}-${first + rows.length - 1}/${total}` : `*/${total}`
  return { rows, next, range }
}

/** The query of a list request: its parameters, `Prefer: count=…`, and what it may embed. */
export async function readRecordQuery(event: H3Event, table: TableInfo, access: QueryAccess = {}, preferences: Preferences = readPreferences(event)): Promise<RecordQuery> {
  const query = getQuery(event)
  // PostgREST's older paging: `Range: 20-39` (items), when the query string does not page itself
  const range = /^(?:items=)?(\d{1,15})-(\d{0,15})$/.exec(requestHeader(event, 'range')?.trim() ?? '')
  if (range && query.offset === undefined && query.limit === undefined && query.cursor === undefined) {
    query.offset = range[1]
    if (range[2]) query.limit = String(Math.max(Number(range[2]) - Number(range[1]) + 1, 1))
  }
  return parseRecordQuery(table, query, await useTableRegistry(), { ...access, count: preferences.count })
}

/** A list answer in the format asked for, with its Link (next page, absolute), Content-Range and Preference-Applied headers. */
export async function answerRecordList(event: H3Event, client: AuditedClient, table: TableInfo, access: QueryAccess = {}) {
  const format = acceptedFormat(event)
  const query = await readRecordQuery(event, table, access)
  const { rows, next, range } = await queryRecords(client, table, query)
  if (next) {
    // the same path and query, the offset replaced by the cursor
    const [pathname, search] = event.path.split('?', 2) as [string, string | undefined]
    const params = new URLSearchParams(search)
    params.delete('offset')
    params.set('cursor', next)
    setResponseHeader(event, 'link', `<${publicOrigin(event)}${pathname}?${params}>; rel="next"`)
  }
  setResponseHeader(event, 'content-range', range)
  if (query.count) setResponseHeader(event, 'preference-applied', `count=${query.count}`)
  return answerRows(event, rows, format)
}

/** The records of the given ids, in that order, as `select` asks (the answer of a write under `return=representation`). */
async function representRecords(db: Pick<Queryable, 'query'>, table: TableInfo, teamId: string, ids: string[], select: SelectItem[] | null, order?: RecordQuery['order']): Promise<DataRecord[]> {
  const registry = await useTableRegistry()
  const extra = embedColumns(select)
  const template = (await cachedSelectTemplate(table, registry)).replace(' from %SOURCE% r', `${extra.length ? `, ${extra.join(', ')}` : ''} from public.${quoteIdent(table.name)} r`)
  const orderBy = order ? ` order by ${orderSql(order)}` : ''
  const { rows } = await db.query<DataRecord>(`${template} where r.team_id = $1 and r.id = any($2::uuid[])${orderBy}`, [teamId, ids])
  if (order) return shapeRows(table, registry, select, rows)
  const byId = new Map(rows.map(row => [row.id as string, row]))
  return shapeRows(table, registry, select, ids.map(id => byId.get(id)).filter((row): row is DataRecord => row !== undefined))
}

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

/** The Preference-Applied header: the preferences this answer honoured. */
function applyPreferences(event: H3Event, preferences: Preferences, applied: (keyof Preferences)[]) {
  const names: Record<string, string> = { maxAffected: 'max-affected' }
  const given = applied.filter(name => preferences[name] !== undefined).map(name => `${names[name] ?? name}=${preferences[name]}`)
  if (given.length) setResponseHeader(event, 'preference-applied', given.join(', '))
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

/** The ETag of a record answer: a hash of its JSON. */
export function recordEtag(record: DataRecord): string {
  return jsonEtag(JSON.stringify(record))
}

/** The ETag of a record already written as JSON (`recordEtag` without serialising it again). */
function jsonEtag(json: string): string {
  return `"${hash('sha256', json, 'base64url').slice(0, 27)}"`
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

/** GET one with its ETag; 304 for a matching If-None-Match; CSV when asked, 406 for an Accept it cannot produce. */
export async function answerRecord(event: H3Event, record: DataRecord): Promise<DataRecord | string | null> {
  const format = acceptedFormat(event)
  const etag = recordEtag(record)
  setResponseHeader(event, 'etag', etag)
  if (requestHeader(event, 'if-none-match')?.split(',').map(t => t.trim()).includes(etag)) {
    setResponseStatus(event, 304)
    return null
  }
  return format.kind === 'array' ? record : answerRows(event, [record], format) as DataRecord | string
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
