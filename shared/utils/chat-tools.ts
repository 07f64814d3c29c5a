import type { DeleteRecordOutput, QueryDatabaseInput, QueryDatabaseOutput, ToolFailure, WebSearchInput, WebSearchOutput, WriteAction, WriteRecordOutput } from '../types/chat'
import { uuidPattern } from './patterns'

/** Most failed statements query_database accepts in one answer; the prompt and the tool say so. */
export const chatQueryAttemptLimit = 3

/** A chat tool call, typed by its tool: what the browser renders and the server produces. */
export type ChatToolCall
  = | { kind: 'query', input: Partial<QueryDatabaseInput>, output?: QueryDatabaseOutput | ToolFailure }
    | { kind: 'write', action: WriteAction, table: string, input: Record<string, unknown>, output?: WriteRecordOutput | DeleteRecordOutput | ToolFailure }
    | { kind: 'search', input: Partial<WebSearchInput>, output?: WebSearchOutput | ToolFailure }
    | { kind: 'other', name: string, input: unknown, output?: unknown }

const writeToolPattern = /^(create|update|delete)_([a-z_][a-z0-9_]*)$/

/** The name of the write tool of an action on a table. */
export const writeToolName = (action: WriteAction, table: string) => `${action}_${table}`

/** Reads a tool call by its tool name. */
export function chatToolCall(name: string, input: unknown, output?: unknown): ChatToolCall {
  const fields = (input ?? {}) as Record<string, unknown>
  if (name === 'query_database') return { kind: 'query', input: fields, output: output as QueryDatabaseOutput | ToolFailure | undefined }
  if (name === 'web_search') return { kind: 'search', input: fields, output: output as WebSearchOutput | ToolFailure | undefined }
  const write = writeToolPattern.exec(name)
  if (write) return { kind: 'write', action: write[1] as WriteAction, table: write[2]!, input: fields, output: output as WriteRecordOutput | DeleteRecordOutput | ToolFailure | undefined }
  return { kind: 'other', name, input, output }
}

export const isToolFailure = (output: unknown): output is ToolFailure =>
  typeof output === 'object' && output !== null && typeof (output as ToolFailure).error === 'string'

/** 'tasks' → 'task', 'activity_log' → 'activity log'. */
export function singular(table: string): string {
  const words = table.replace(/_/g, ' ')
  return words.endsWith('ies') ? `${words.slice(0, -3)}y` : words.endsWith('s') ? words.slice(0, -1) : words
}

/** The column that names a record of a table, when it has one. */
export const labelColumns = ['title', 'name', 'email'] as const

/** The uuids an input refers to (the record itself and its foreign keys), which the server names. */
export function referencedIds(input: Record<string, unknown>): string[] {
  return Object.values(input).filter((value): value is string => typeof value === 'string' && uuidPattern.test(value))
}

const fieldLabel = (column: string) => column.replace(/_id$/, '').replace(/_/g, ' ')

function formatValue(column: string, value: unknown, names: Record<string, string>): string {
  if (value === null) return 'none'
  if (typeof value === 'string') return names[value] ?? (column.endsWith('_id') ? 'an unknown record' : value)
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

/**
 * A proposed write as a question, ids replaced by names:
 * "Create task 'Write the launch post' in project Website relaunch?".
 */
export function writeSentence(action: WriteAction, table: string, input: Record<string, unknown>, names: Record<string, string> = {}): string {
  const noun = singular(table)
  const { id, ...fields } = input
  const labelColumn = labelColumns.find(column => typeof fields[column] === 'string')
  const target = typeof id === 'string'
    ? (names[id] ? `${noun} '${names[id]}'` : `the ${noun} ${id}`)
    : labelColumn ? `${noun} '${fields[labelColumn]}'` : `a ${noun}`
  if (action === 'delete') return `Delete ${target}?`
  const details: string[] = []
  let place = ''
  for (const [column, value] of Object.entries(fields)) {
    if (action === 'create' && column === labelColumn) continue
    if (action === 'create' && column === 'project_id' && typeof value === 'string') {
      place = ` in project ${formatValue(column, value, names)}`
      continue
    }
    details.push(`${fieldLabel(column)} ${action === 'update' ? 'to ' : ''}${formatValue(column, value, names)}`)
  }
  if (action === 'update') return `Change ${target}: ${details.join(', ') || 'nothing'}?`
  return `Create ${target}${place}${details.length ? ` with ${details.join(', ')}` : ''}?`
}

/** A finished write in a few words: "Created task 'Write the launch post'". */
export function writeResultSentence(action: WriteAction, table: string, output: WriteRecordOutput | DeleteRecordOutput, names: Record<string, string> = {}): string {
  const noun = singular(table)
  if ('deleted' in output) return `Deleted ${names[output.deleted] ? `${noun} '${names[output.deleted]}'` : `the ${noun}`}`
  const labelColumn = labelColumns.find(column => typeof output.record[column] === 'string')
  const label = labelColumn ? ` '${output.record[labelColumn] as string}'` : ''
  return `${action === 'create' ? 'Created' : 'Updated'} ${noun}${label}`
}

/** The page of a record in the browser. */
export const recordPath = (table: string, id: string) => `/app/data/${table}/${id}`

/** Whether a query result can be drawn as a bar chart: one text column (the category) and one number column. */
export function chartAxes(output: QueryDatabaseOutput): { category: number, value: number } | null {
  if (output.rows.length < 2 || output.columns.length < 2) return null
  const isNumber = (value: unknown) => typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
  const columnIs = (index: number, test: (value: unknown) => boolean) => output.rows.every(row => test(row[index]))
  const value = output.columns.findLastIndex((_, index) => columnIs(index, isNumber))
  if (value < 0) return null
  const others = output.columns.map((_, index) => index).filter(index => index !== value)
  const category = others.find(index => !columnIs(index, isNumber)) ?? others[0]!
  return { category, value }
}
