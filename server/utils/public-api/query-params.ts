import { uuidPattern } from '#shared/utils/patterns'
import { problemCodes, typeInWords } from '../records/column-rules'
import { rejectUnstorable } from '../validation'
import type { ColumnInfo, TableInfo } from '../records/table-registry'
import type { Filter, FilterGroup, FilterNode, QueryAccess, RecordQuery, SelectItem } from './query'
import { decodeCursor, cursorScope } from './cursor'
import { maxEmbedDepth, resolveEmbed, selectableColumns } from './embeds'
import { badRequest as bad } from './errors'

/** The most rows one page answers: a larger `limit` is served as this many. */
export const maxPageRows = 100

const operators = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch', 'in', 'is', 'isdistinct', 'fts', 'plfts', 'phfts', 'wfts'])
const reservedParams = new Set(['limit', 'offset', 'order', 'cursor', 'select', 'columns', 'on_conflict'])
const logicParams = new Set(['or', 'and', 'not.or', 'not.and'])

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
export const unquote = (text: string) => /^"(.*)"$/s.exec(text)?.[1]?.replace(/\\(.)/g, '$1') ?? text

export const columnOf = (table: TableInfo, name: string, where: string) => {
  const column = table.columns.find(c => c.name === name)
  if (!column) throw bad(`${where}: is not a column of ${table.name}`, problemCodes.unknownColumn)
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
  const invalid = (item: string) => bad(`${key}: ${typeInWords(column)} ("${item.slice(0, 40)}" is not)`, problemCodes.wrongType)
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
/** Parses `select`: `*`, `column`, `alias:column`, `alias:table(items)`, `table!fk_column(items)`. */
export function parseSelect(table: TableInfo, text: string, registry: Map<string, TableInfo>, access: QueryAccess, depth = 0): SelectItem[] {
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
      if (!column) throw bad(`select: "${name.slice(0, 63)}" is not a column of ${table.name}`, problemCodes.unknownColumn)
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
    if (!column) throw bad(`order: ${name.slice(0, 63)} is not a column of ${table.name}`, problemCodes.unknownColumn)
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
