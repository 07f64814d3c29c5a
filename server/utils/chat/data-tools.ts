// The tools over a team's data, whoever calls them: each door (the chat's model, an MCP client)
// lists and runs these same definitions and adds only what its protocol needs (approval, limits).
import { z } from 'zod'
import type { DeleteRecordOutput, QueryDatabaseOutput, ToolFailure, WriteAction, WriteRecordOutput } from '#shared/types/chat'
import { writeToolName } from '#shared/utils/chat-tools'
import type { AuditedClient } from '../db/audited-client'
import { recordSchemas } from '../records/record-input'
import { createRecord, deleteRecord, updateRecord } from '../records/records'
import type { TableInfo } from '../records/table-registry'
import { ChatQueryRefused, runChatQuery } from './query-runner'
import { useChatQueryTarget } from './query-pool'
import { logger } from '../log/logger'

/** A tool's input as JSON Schema: the allowed values, formats, foreign keys and comments of its columns. */
export const toolInputJsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>

/** A typed write tool: one action on one domain table. */
export interface WriteToolDefinition {
  name: string
  action: WriteAction
  table: TableInfo
  /** What it does, without how a door approves it. */
  description: string
  /** Its input; the records service validates it again when it runs. */
  schema: z.ZodType
}

/**
 * The write tools of the domain tables among `tables` on which `allows` grants the action: every
 * create first, then every update, then every delete, validated by the registry's schemas.
 */
export function writeToolDefinitions(tables: Map<string, TableInfo>, allows: (table: TableInfo, action: WriteAction) => boolean): WriteToolDefinition[] {
  const domain = [...tables.values()].filter(table => table.isDomain)
  const definitions: WriteToolDefinition[] = []
  for (const table of domain.filter(t => allows(t, 'create'))) {
    definitions.push({ name: writeToolName('create', table.name), action: 'create', table, description: `Create one ${table.name} record in the team.`, schema: recordSchemas(table).create })
  }
  for (const table of domain.filter(t => allows(t, 'update'))) {
    const schema = recordSchemas(table).update.extend({ id: z.uuid().describe(`The id of the ${table.name} record to change.`) })
    definitions.push({ name: writeToolName('update', table.name), action: 'update', table, description: `Change columns of one ${table.name} record of the team, by id.`, schema })
  }
  for (const table of domain.filter(t => allows(t, 'delete'))) {
    const schema = z.strictObject({ id: z.uuid().describe(`The id of the ${table.name} record to delete.`) })
    definitions.push({ name: writeToolName('delete', table.name), action: 'delete', table, description: `Delete one ${table.name} record of the team, by id.`, schema })
  }
  return definitions
}

/**
 * An error of a write as the model sees it: the message, plus what the column or constraint it
 * names allows (a `one of` list, a CHECK definition), so that the model can correct itself.
 */
export function toolFailure(table: TableInfo, error: unknown): ToolFailure {
  const message = (error as { statusMessage?: string, message?: string }).statusMessage ?? (error as Error).message ?? 'The write failed'
  const failure: ToolFailure = { error: message }
  const field = /^([a-z_][a-z0-9_]*): /.exec(message)?.[1]
  const column = table.columns.find(c => c.name === field)
  if (column) {
    failure.field = column.name
    if (column.allowedValues) failure.allowed_values = column.allowedValues
    const checks = table.checks.filter(check => check.columns.includes(column.name))
    if (checks.length) failure.constraints = checks.map(check => ({ name: check.name, definition: check.definition }))
  }
  const named = table.checks.find(check => message.includes(check.name))
  if (named && !failure.constraints) failure.constraints = [{ name: named.name, definition: named.definition }]
  return failure
}

/**
 * Runs a write tool through the records service with the client's actor, team and source: the
 * record (or the deleted id), or a failure the caller can act on; nothing is written on failure.
 */
export async function runWriteTool(client: AuditedClient, definition: WriteToolDefinition, input: Record<string, unknown>): Promise<WriteRecordOutput | DeleteRecordOutput | ToolFailure> {
  const { table } = definition
  try {
    if (definition.action === 'create') return { record: await createRecord(client, table, input) as WriteRecordOutput['record'] }
    const { id, ...changes } = input
    if (definition.action === 'update') return { record: await updateRecord(client, table, String(id), changes) as WriteRecordOutput['record'] }
    await deleteRecord(client, table, String(id))
    return { deleted: String(id) }
  }
  catch (error) {
    if ((error as { statusCode?: number }).statusCode && (error as { statusCode: number }).statusCode < 500) return toolFailure(table, error)
    logger(client.context.source).error('A write tool failed', { error, request_id: client.context.requestId })
    return { error: 'The write failed on the server; nothing was changed.' }
  }
}

/** query_database: its name, what it does (a door adds its own limits) and its input. */
export const queryDatabaseTool = {
  name: 'query_database',
  description: 'Run one read-only PostgreSQL SELECT over the team\'s tables and get the rows back. '
    + 'Only the current team\'s rows are visible; do not filter by team_id.',
  schema: z.object({ sql: z.string().min(1).max(10_000).describe('One SELECT statement.') }),
}

const maxResultChars = 50_000

/** The leading rows that fit in what a model should read at once. */
function fitRows(rows: unknown[][]): unknown[][] {
  let size = 0
  const fitting: unknown[][] = []
  for (const row of rows) {
    size += JSON.stringify(row).length
    if (size > maxResultChars) break
    fitting.push(row)
  }
  return fitting
}

/**
 * Runs one statement of query_database: the chat's SQL guard over `readable`, then the statement
 * as chat_reader bound to the team and those tables. A refusal or a database error about the
 * statement comes back as a failure naming why.
 */
export async function queryDatabase(teamId: string, readable: ReadonlySet<string>, sql: string): Promise<QueryDatabaseOutput | ToolFailure> {
  try {
    const result = await runChatQuery(await useChatQueryTarget(), sql, teamId, readable)
    const rows = fitRows(result.rows)
    const note = rows.length < result.rows.length
      ? `The rows are too large to show in full; only the first ${rows.length} are shown. Select fewer or shorter columns.`
      : result.truncated
    return { columns: result.columns, rows, row_count: rows.length, ...(note ? { note } : {}) }
  }
  catch (error) {
    if (error instanceof ChatQueryRefused) return { error: `Refused: ${error.message}` }
    // a database error about the statement itself (unknown column, bad cast, timeout)
    return { error: (error as Error).message }
  }
}
