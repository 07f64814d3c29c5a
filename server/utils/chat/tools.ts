import type { ToolSet } from 'ai'
import { z } from 'zod'
import { can, type CrudAction } from '#shared/permissions'
import type { QueryDatabaseOutput, ToolFailure, WebSearchOutput, WriteAction, WriteProposal } from '#shared/types/chat'
import { chatQueryAttemptLimit, isToolFailure } from '#shared/utils/chat-tools'
import { createAuditedClient } from '../db/audited-client'
import { useTableRegistry, type TableInfo, domainTables } from '../records/table-registry'
import type { ChatCaller } from './access'
import { queryDatabase, queryDatabaseTool, runWriteTool, toolInputJsonSchema, writeToolDefinitions } from './data-tools'
import { writeProposal } from './proposals'
import { chatTablePermissions, tablePermissions } from './table-permissions'
import { setting } from '../settings'

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

/** The AI SDK's tool helpers: the SDK is imported with the first chat turn, not at start-up. */
type ToolHelpers = Pick<typeof import('ai'), 'jsonSchema' | 'tool'>

/** The model gets the typed JSON Schema; validation happens once, in the records service, after approval. */
const modelSchema = ({ jsonSchema }: ToolHelpers, schema: z.ZodType) => jsonSchema<Record<string, unknown>>(toolInputJsonSchema(schema) as Parameters<ToolHelpers['jsonSchema']>[0])

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
export async function writeTools(tables: Map<string, TableInfo>, registry: Map<string, TableInfo>, caller: WriteCaller, chatId: string, state: ChatTurnState): Promise<ToolSet> {
  const ai = await import('ai')
  const client = createAuditedClient(caller.db, { actorId: caller.userId, teamId: caller.teamId, source: 'chat', sourceRef: chatId })
  const allows = (table: TableInfo, action: WriteAction) => can(caller.role, chatTablePermissions(table.name)[action])
  const tools: ToolSet = {}
  for (const definition of writeToolDefinitions(tables, allows)) {
    tools[definition.name] = ai.tool({
      description: `${definition.description} The user approves it before it runs.`,
      inputSchema: modelSchema(ai, definition.schema),
      needsApproval: approvalOf(definition.schema, definition.action, definition.table, registry, caller, state),
      execute: input => runWriteTool(client, definition, input),
    })
  }
  return tools
}

/** A failed statement's error as the model reads it, with how many tries it has left in this answer. */
function queryFailure(message: string, state: ChatTurnState): ToolFailure {
  state.failedQueries += 1
  const left = chatQueryAttemptLimit - state.failedQueries
  return left > 0
    ? { error: message, attempts_left: left, hint: 'Read the error, fix the statement and call query_database again.' }
    : { error: message, attempts_left: 0, hint: `${chatQueryAttemptLimit} statements failed in this answer, the limit: do not call query_database again; tell the user what went wrong.` }
}

function queryTool({ tool }: ToolHelpers, tables: Map<string, TableInfo>, caller: ChatCaller, state: ChatTurnState) {
  const readable = new Set(tablesAllowed(tables, caller, 'view').map(table => table.name))
  return tool({
    description: `${queryDatabaseTool.description} `
      + `If a statement fails, its error comes back so you can fix it; at most ${chatQueryAttemptLimit} statements may fail per answer.`,
    inputSchema: queryDatabaseTool.schema,
    execute: async ({ sql }): Promise<QueryDatabaseOutput | ToolFailure> => {
      if (state.failedQueries >= chatQueryAttemptLimit) {
        // counted too: the answer stops after this step (queryAttemptsExhausted)
        state.failedQueries += 1
        return { error: `Not run: ${chatQueryAttemptLimit} statements already failed in this answer. Answer the user without querying again.`, attempts_left: 0 }
      }
      const output = await queryDatabase(caller.teamId, readable, sql)
      return isToolFailure(output) ? queryFailure(output.error, state) : output
    },
  })
}

/** Stops an answer whose statements keep failing once the model ignored the limit. */
export const queryAttemptsExhausted = (state: ChatTurnState) => () => state.failedQueries > chatQueryAttemptLimit

function webSearchTool({ tool }: ToolHelpers, url: string) {
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
export async function chatTools(tables: Map<string, TableInfo>, registry: Map<string, TableInfo>, caller: ChatCaller, chatId: string, state: ChatTurnState): Promise<ToolSet> {
  const ai = await import('ai')
  const searchUrl = setting('chatWebSearchUrl')
  return {
    query_database: queryTool(ai, tables, caller, state),
    ...await writeTools(tables, registry, caller, chatId, state),
    ...(searchUrl ? { web_search: webSearchTool(ai, searchUrl) } : {}),
  }
}
