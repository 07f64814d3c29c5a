import { jsonSchema, tool, type ToolSet } from 'ai'
import { z } from 'zod'
import { can, type CrudAction } from '#shared/permissions'
import { createAuditedClient, type AuditedClient } from '../audited-client'
import type { TableInfo } from '../table-registry'
import type { ChatCaller } from './access'
import { ChatQueryRefused, runChatQuery } from './query-runner'
import { useChatQueryTarget } from './query-pool'
import { tablePermissions } from './table-permissions'

/** A tool's answer to the model when it could not do its job: never a crash of the stream. */
export interface ToolFailure {
  error: string
  [detail: string]: unknown
}

/** The registered tables that exist in the catalog, by name. */
export async function chatTables(): Promise<Map<string, TableInfo>> {
  const registry = await useTableRegistry()
  const tables = new Map<string, TableInfo>()
  for (const name of Object.keys(tablePermissions)) {
    const table = registry.get(name)
    if (table) tables.set(name, table)
  }
  return tables
}

/** The chat tables on which the caller holds the action's permission. */
export function tablesAllowed(tables: Map<string, TableInfo>, caller: Pick<ChatCaller, 'role'>, action: CrudAction): TableInfo[] {
  return [...tables.values()].filter(table => can(caller.role, tablePermissions[table.name]![action]))
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

const isValid = (schema: z.ZodType) => (input: unknown) => schema.safeParse(input).success

function writeTools(tables: Map<string, TableInfo>, caller: ChatCaller, client: AuditedClient): ToolSet {
  const tools: ToolSet = {}
  for (const table of tablesAllowed(tables, caller, 'create').filter(t => t.isDomain)) {
    const { create } = recordSchemas(table)
    tools[`create_${table.name}`] = tool({
      description: `Create one ${table.name} record in the team. The user approves it before it runs.`,
      inputSchema: modelSchema(create),
      // invalid input writes nothing, so the model learns why at once, without asking the user
      needsApproval: input => isValid(create)(input),
      execute: input => attempt(table, async () => ({ record: await createRecord(client, table, input) })),
    })
  }
  for (const table of tablesAllowed(tables, caller, 'update').filter(t => t.isDomain)) {
    const update = recordSchemas(table).update.extend({ id: z.uuid().describe(`The id of the ${table.name} record to change`) })
    tools[`update_${table.name}`] = tool({
      description: `Change columns of one ${table.name} record of the team, by id. The user approves it before it runs.`,
      inputSchema: modelSchema(update),
      needsApproval: input => isValid(update)(input),
      execute: ({ id, ...changes }) => attempt(table, async () => ({ record: await updateRecord(client, table, String(id), changes) })),
    })
  }
  for (const table of tablesAllowed(tables, caller, 'delete').filter(t => t.isDomain)) {
    const target = z.strictObject({ id: z.uuid().describe(`The id of the ${table.name} record to delete`) })
    tools[`delete_${table.name}`] = tool({
      description: `Delete one ${table.name} record of the team, by id. The user approves it before it runs.`,
      inputSchema: modelSchema(target),
      needsApproval: input => isValid(target)(input),
      execute: input => attempt(table, async () => {
        await deleteRecord(client, table, String(input.id))
        return { deleted: input.id }
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

function queryTool(tables: Map<string, TableInfo>, caller: ChatCaller) {
  const readable = new Set(tablesAllowed(tables, caller, 'view').map(table => table.name))
  return tool({
    description: 'Run one read-only PostgreSQL SELECT over the team\'s tables and get the rows back. '
      + 'Only the current team\'s rows are visible; do not filter by team_id.',
    inputSchema: z.object({ sql: z.string().min(1).max(10_000).describe('One SELECT statement') }),
    execute: async ({ sql }) => {
      try {
        const result = await runChatQuery(await useChatQueryTarget(), sql, caller.teamId, readable)
        const rows = fitRows(result.rows)
        const note = rows.length < result.rows.length
          ? `The rows are too large to show in full; only the first ${rows.length} are shown. Select fewer or shorter columns.`
          : result.truncated
        return { columns: result.columns, rows, row_count: rows.length, ...(note ? { note } : {}) }
      }
      catch (error) {
        if (error instanceof ChatQueryRefused) return { error: `Refused: ${error.message}` }
        // a database error about the model's own statement (unknown column, bad cast, timeout)
        return { error: (error as Error).message }
      }
    },
  })
}

function webSearchTool(url: string) {
  return tool({
    description: 'Search the web; answers titles, addresses and snippets of the top results.',
    inputSchema: z.object({ query: z.string().min(1).max(400) }),
    execute: async ({ query }) => {
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
export function chatTools(tables: Map<string, TableInfo>, caller: ChatCaller, chatId: string): ToolSet {
  const client = createAuditedClient(caller.db, { actorId: caller.userId, teamId: caller.teamId, source: 'chat', sourceRef: chatId })
  const searchUrl = setting('chatWebSearchUrl')
  return {
    query_database: queryTool(tables, caller),
    ...writeTools(tables, caller, client),
    ...(searchUrl ? { web_search: webSearchTool(searchUrl) } : {}),
  }
}
