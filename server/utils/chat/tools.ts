import { jsonSchema, tool, type ToolSet } from 'ai'
import { z } from 'zod'
import { can, type CrudAction } from '#shared/permissions'
import type { DeleteRecordOutput, QueryDatabaseOutput, ToolFailure, WebSearchOutput, WriteAction, WriteProposal, WriteRecordOutput } from '#shared/types/chat'
import { chatQueryAttemptLimit, writeToolName } from '#shared/utils/chat-tools'
import { createAuditedClient } from '../audited-client'
import { createRecord, deleteRecord, recordSchemas, updateRecord } from '../records'
import { useTableRegistry, type TableInfo } from '../table-registry'
import type { ChatCaller } from './access'
import { writeProposal } from './proposals'
import { ChatQueryRefused, runChatQuery } from './query-runner'
import { useChatQueryTarget } from './query-pool'
import { chatTablePermissions, tablePermissions } from './table-permissions'

/** The registered tables that exist in the catalog, and every domain table, by name. */
export async function chatTables(): Promise<Map<string, TableInfo>> {
  const registry = await useTableRegistry()
  const tables = new Map<string, TableInfo>()
  for (const name of Object.keys(tablePermissions)) {
    const table = registry.get(name)
    if (table) tables.set(name, table)
  }
  for (const table of await domainTables()) tables.set(table.name, table)
  return tables
}

/** The chat tables on which the caller holds the action's permission. */
export function tablesAllowed(tables: Map<string, TableInfo>, caller: Pick<ChatCaller, 'role'>, action: CrudAction): TableInfo[] {
  return [...tables.values()].filter(table => can(caller.role, chatTablePermissions(table.name)[action]))
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

async function attempt<T>(table: TableInfo, fn: () => Promise<T>): Promise<T | ToolFailure> {
  try {
    return await fn()
  }
  catch (error) {
    if ((error as { statusCode?: number }).statusCode && (error as { statusCode: number }).statusCode < 500) return toolFailure(table, error)
    console.error('[chat] write tool failed', error)
    return { error: 'The write failed on the server; nothing was changed.' }
  }
}

/** The model gets the typed JSON Schema; validation happens once, in the records service, after approval. */
const modelSchema = (schema: z.ZodType) => jsonSchema<Record<string, unknown>>(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Parameters<typeof jsonSchema>[0])

/** What the tools of one answer share: failed statements so far, and the write proposals as sentences. */
export interface ChatTurnState {
  failedQueries: number
  proposals: Map<string, WriteProposal>
}

export const newTurnState = (): ChatTurnState => ({ failedQueries: 0, proposals: new Map() })

/** Who the write tools act for. */
export type WriteCaller = Pick<ChatCaller, 'db' | 'userId' | 'teamId' | 'role'>

/**
 * Asks for approval of valid input only (invalid input writes nothing, so the model learns why at
 * once, without asking the user), and words the proposal with the names of the records it names.
 */
function approvalOf(schema: z.ZodType, action: WriteAction, table: TableInfo, registry: Map<string, TableInfo>, caller: WriteCaller, state: ChatTurnState) {
  return async (input: Record<string, unknown>, { toolCallId }: { toolCallId: string }) => {
    if (!schema.safeParse(input).success) return false
    state.proposals.set(toolCallId, await writeProposal(caller.db, registry, caller.teamId, action, table, input))
    return true
  }
}

/**
 * The write tools of the caller's role: create/update/delete of each domain table the role may
 * change, validated by the registry's schemas, run through the audited client with source
 * `chat`, each only after the user approved it.
 */
export function writeTools(tables: Map<string, TableInfo>, registry: Map<string, TableInfo>, caller: WriteCaller, chatId: string, state: ChatTurnState): ToolSet {
  const client = createAuditedClient(caller.db, { actorId: caller.userId, teamId: caller.teamId, source: 'chat', sourceRef: chatId })
  const tools: ToolSet = {}
  for (const table of tablesAllowed(tables, caller, 'create').filter(t => t.isDomain)) {
    const { create } = recordSchemas(table)
    tools[writeToolName('create', table.name)] = tool({
      description: `Create one ${table.name} record in the team. The user approves it before it runs.`,
      inputSchema: modelSchema(create),
      needsApproval: approvalOf(create, 'create', table, registry, caller, state),
      execute: (input): Promise<WriteRecordOutput | ToolFailure> => attempt(table, async () => ({ record: await createRecord(client, table, input) as WriteRecordOutput['record'] })),
    })
  }
  for (const table of tablesAllowed(tables, caller, 'update').filter(t => t.isDomain)) {
    const update = recordSchemas(table).update.extend({ id: z.uuid().describe(`The id of the ${table.name} record to change`) })
    tools[writeToolName('update', table.name)] = tool({
      description: `Change columns of one ${table.name} record of the team, by id. The user approves it before it runs.`,
      inputSchema: modelSchema(update),
      needsApproval: approvalOf(update, 'update', table, registry, caller, state),
      execute: ({ id, ...changes }): Promise<WriteRecordOutput | ToolFailure> => attempt(table, async () => ({ record: await updateRecord(client, table, String(id), changes) as WriteRecordOutput['record'] })),
    })
  }
  for (const table of tablesAllowed(tables, caller, 'delete').filter(t => t.isDomain)) {
    const target = z.strictObject({ id: z.uuid().describe(`The id of the ${table.name} record to delete`) })
    tools[writeToolName('delete', table.name)] = tool({
      description: `Delete one ${table.name} record of the team, by id. The user approves it before it runs.`,
      inputSchema: modelSchema(target),
      needsApproval: approvalOf(target, 'delete', table, registry, caller, state),
      execute: (input): Promise<DeleteRecordOutput | ToolFailure> => attempt(table, async () => {
        await deleteRecord(client, table, String(input.id))
        return { deleted: String(input.id) }
      }),
    })
  }
  return tools
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

/** A failed statement's error as the model reads it, with how many tries it has left in this answer. */
function queryFailure(message: string, state: ChatTurnState): ToolFailure {
  state.failedQueries += 1
  const left = chatQueryAttemptLimit - state.failedQueries
  return left > 0
    ? { error: message, attempts_left: left, hint: 'Read the error, fix the statement and call query_database again.' }
    : { error: message, attempts_left: 0, hint: `${chatQueryAttemptLimit} statements failed in this answer, the limit: do not call query_database again; tell the user what went wrong.` }
}

function queryTool(tables: Map<string, TableInfo>, caller: ChatCaller, state: ChatTurnState) {
  const readable = new Set(tablesAllowed(tables, caller, 'view').map(table => table.name))
  return tool({
    description: 'Run one read-only PostgreSQL SELECT over the team\'s tables and get the rows back. '
      + 'Only the current team\'s rows are visible; do not filter by team_id. '
      + `If a statement fails, its error comes back so you can fix it; at most ${chatQueryAttemptLimit} statements may fail per answer.`,
    inputSchema: z.object({ sql: z.string().min(1).max(10_000).describe('One SELECT statement') }),
    execute: async ({ sql }): Promise<QueryDatabaseOutput | ToolFailure> => {
      if (state.failedQueries >= chatQueryAttemptLimit) {
        // counted too: the answer stops after this step (queryAttemptsExhausted)
        state.failedQueries += 1
        return { error: `Not run: ${chatQueryAttemptLimit} statements already failed in this answer. Answer the user without querying again.`, attempts_left: 0 }
      }
      try {
        const result = await runChatQuery(await useChatQueryTarget(), sql, caller.teamId, readable)
        const rows = fitRows(result.rows)
        const note = rows.length < result.rows.length
          ? `The rows are too large to show in full; only the first ${rows.length} are shown. Select fewer or shorter columns.`
          : result.truncated
        return { columns: result.columns, rows, row_count: rows.length, ...(note ? { note } : {}) }
      }
      catch (error) {
        if (error instanceof ChatQueryRefused) return queryFailure(`Refused: ${error.message}`, state)
        // a database error about the model's own statement (unknown column, bad cast, timeout)
        return queryFailure((error as Error).message, state)
      }
    },
  })
}

/** Stops an answer whose statements keep failing once the model ignored the limit. */
export const queryAttemptsExhausted = (state: ChatTurnState) => () => state.failedQueries > chatQueryAttemptLimit

function webSearchTool(url: string) {
  return tool({
    description: 'Search the web; answers titles, addresses and snippets of the top results.',
    inputSchema: z.object({ query: z.string().min(1).max(400) }),
    execute: async ({ query }): Promise<WebSearchOutput | ToolFailure> => {
      try {
        const address = new URL(url)
        address.searchParams.set('q', query)
        address.searchParams.set('format', 'json')
        const response = await fetch(address, { signal: AbortSignal.timeout(10_000), redirect: 'error' })
        if (!response.ok) return { error: `The search service answered ${response.status}` }
        const body = await response.json() as { results?: { title?: string, url?: string, content?: string }[] }
        return { results: (body.results ?? []).slice(0, 5).map(r => ({ title: r.title, url: r.url, snippet: r.content })) }
      }
      catch (error) {
        return { error: `The search failed: ${(error as Error).message}` }
      }
    },
  })
}

/**
 * The tools of one chat turn: query_database over the tables the caller may view, typed write
 * tools for the tables and actions the caller's role allows (each approved by the user, run
 * through the audited client with source `chat` and the chat id), and web_search when enabled.
 */
export function chatTools(tables: Map<string, TableInfo>, registry: Map<string, TableInfo>, caller: ChatCaller, chatId: string, state: ChatTurnState): ToolSet {
  const searchUrl = setting('chatWebSearchUrl')
  return {
    query_database: queryTool(tables, caller, state),
    ...writeTools(tables, registry, caller, chatId, state),
    ...(searchUrl ? { web_search: webSearchTool(searchUrl) } : {}),
  }
}
