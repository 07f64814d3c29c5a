import { quoteIdent, type ColumnInfo } from '../records/table-registry'
import { selectableColumns } from './embeds'
import { badRequest as bad } from './errors'
import type { Embed, FilterNode, RecordQuery, SelectItem } from './query'

const textSearch: Record<string, string> = { fts: 'to_tsquery', plfts: 'plainto_tsquery', phfts: 'phraseto_tsquery', wfts: 'websearch_to_tsquery' }
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
export function filterSql(filters: FilterNode[], params: unknown[], alias = 'r'): string[] {
  return filters.map(node => conditionSql(node, params, alias))
}

/** Where a key's nulls sort: as asked, else last (this API's default in both directions). */
const nullsFirst = (key: RecordQuery['order'][number]) => key.nulls === 'first'

/** "Strictly after the cursor row" in the list's order, nulls where the order puts them, the id breaking ties. */
export function afterSql(query: RecordQuery, params: unknown[]): string {
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
export function embedColumns(select: SelectItem[] | null): string[] {
  const counter = { next: 0 }
  return (select ?? []).flatMap((item, i) => item.kind === 'embed' ? [`${embedSql(item.embed, 'r', counter)} as "__embed${i}"`] : [])
}
/** The order by of a list: nulls last by default, and only where a column may hold nulls (on a not-null column the plain order matches its index); the id breaks ties. */
export function orderSql(order: RecordQuery['order']): string {
  return [...order.map(o => `r.${quoteIdent(o.column.name)} ${o.direction}${o.column.nullable ? ` nulls ${nullsFirst(o) ? 'first' : 'last'}` : ''}`), `r.id ${order.at(-1)!.direction}`].join(', ')
}
