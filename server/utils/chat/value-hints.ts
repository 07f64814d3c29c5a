import type { TableInfo } from '../records/table-registry'
import { quoteIdent } from '../records/table-registry'
import { defaultChatQueryLimits, executeChatStatement, type ChatQueryTarget } from './query-runner'

/** Columns with at most this many distinct values get them in the hints. */
const maxValues = 10
/** Longer values are free text, not categories. */
const maxValueLength = 40
/** Rows read per column at most, so that the hints cost little on a large table. */
const sampleRows = 2000

const textTypes = new Set(['text', 'citext'])
const isTextType = (type: string) => textTypes.has(type) || type.startsWith('character varying')

/** Short text columns the hints may list values of: no list CHECK already names them, no foreign key. */
function candidateColumns(table: TableInfo): string[] {
  return table.columns
    .filter(column => isTextType(column.type) && !column.allowedValues && !column.references)
    .map(column => column.name)
}

/** Values found in the team's own rows, by table and column: `{ tasks: { label: ['a', 'b'] } }`. */
export type ValueHints = Record<string, Record<string, string[]>>

/**
 * For short text columns with few distinct values, the values the team's own rows hold. Read as
 * chat_reader with the team setting (the same database layer as query_database), so a value of
 * another team can never appear. A column whose values never repeat (names, titles) is left out.
 */
export async function valueHints(target: ChatQueryTarget, teamId: string, tables: TableInfo[]): Promise<ValueHints> {
  const parts = tables.flatMap(table => candidateColumns(table).map(column => `select ${[
    `'${table.name}'::text as table_name`,
    `'${column}'::text as column_name`,
    'count(distinct v)::int as distinct_count',
    'count(v)::int as row_count',
    'coalesce(max(length(v)), 0)::int as max_length',
    `(array_agg(distinct v order by v))[1:${maxValues + 1}] as found`,
  ].join(', ')} from (select ${quoteIdent(column)}::text as v from public.${quoteIdent(table.name)} limit ${sampleRows}) sample`))
  if (!parts.length) return {}
  const { rows } = await executeChatStatement(target, parts.join('\nunion all\n'), { teamId, tables: new Set(tables.map(table => table.name)) }, { ...defaultChatQueryLimits, rowLimit: parts.length })
  const hints: ValueHints = {}
  for (const [table, column, distinct, count, maxLength, found] of rows as [string, string, number, number, number, string[] | null][]) {
    if (distinct < 1 || distinct > maxValues || distinct >= count || maxLength > maxValueLength || !found) continue
    hints[table] = { ...hints[table], [column]: found }
  }
  return hints
}
