// The team's data over the Model Context Protocol: the chat's tools (chat/data-tools.ts) served to
// an AI agent that holds a team API key or an OAuth access token (a grant, server/utils/oauth/).
// The scopes choose the tools; a write scope stands for the chat's per-write approval (the agent's
// own client asks its user before a call).
//
// The SDK is imported on the first MCP request, not at start-up (docs/architecture.md, "Start-up and
// several instances").
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { H3Event } from 'h3'
import { isToolFailure } from '#shared/utils/chat-tools'
import { scopeAllows } from '#shared/utils/api-keys'
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import { can, tablePermission, type Role } from '#shared/permissions'
import type { WriteAction } from '#shared/types/chat'
import type { AuthenticatedKey } from '../credentials/api-keys'
import type { AuthenticatedGrant } from '../oauth/verify'
import { noteApiErrorCode } from '../api-log/recorder'
import { createAuditedClient } from '../db/audited-client'
import { queryDatabase, queryDatabaseTool, runWriteTool, toolInputJsonSchema, writeToolDefinitions } from '../chat/data-tools'
import { domainTables } from '../records/table-registry'
import { useDb } from '../db/database'

/** One tool as an MCP client lists it, and how it runs. */
interface McpTool {
  listed: Tool
  run: (input: Record<string, unknown>) => Promise<object>
}

/**
 * Who an MCP request acts as: the team, the scopes, and how its writes are logged (the actor, the
 * source_ref, and the API key when it is one). `grant` is the verified OAuth grant of a request
 * with an access token (undefined for an API key).
 */
export interface McpCaller {
  teamId: string
  actorId: string
  scopes: ApiKeyScopes
  sourceRef: string
  apiKeyId: string | null
  grant?: AuthenticatedGrant
  /** The granting user's role now (a grant's caller): its write tools are those of the actions the role allows. */
  role?: Role
}

/** The caller of a request with an API key: the key's creator writes, the key's id is the source_ref. */
export function keyCaller(apiKey: AuthenticatedKey): McpCaller {
  return { teamId: apiKey.team_id, actorId: apiKey.created_by, scopes: apiKey.scopes, sourceRef: apiKey.id, apiKeyId: apiKey.id }
}

/** The caller of a request with an OAuth access token: the granting user writes, the grant's id is the source_ref. */
export function grantCaller(grant: AuthenticatedGrant): McpCaller {
  return { teamId: grant.teamId, actorId: grant.userId, scopes: grant.scopes, sourceRef: grant.grantId, apiKeyId: null, grant, role: grant.role }
}

/**
 * The tools a caller may use: query_database over the domain tables its scopes may read (as
 * chat_reader bound to the team and those tables; listed when it may read at least one), and
 * create/update/delete of each domain table they may write (for a grant, of the actions its
 * user's role allows now), which write with source `mcp`, the caller's actor and source_ref.
 */
export async function mcpTools(caller: McpCaller, requestId?: string): Promise<Map<string, McpTool>> {
  const tables = new Map((await domainTables()).map(table => [table.name, table]))
  const readable = new Set([...tables.keys()].filter(name => scopeAllows(caller.scopes, name, 'read')))
  const tools = new Map<string, McpTool>()
  if (readable.size) {
    tools.set(queryDatabaseTool.name, {
      listed: {
        name: queryDatabaseTool.name,
        description: `${queryDatabaseTool.description} Tables: ${[...readable].sort().join(', ')}.`,
        inputSchema: toolInputJsonSchema(queryDatabaseTool.schema) as Tool['inputSchema'],
        annotations: { readOnlyHint: true },
      },
      run: async (input) => {
        const parsed = queryDatabaseTool.schema.safeParse(input)
        if (!parsed.success) return { error: 'sql: give one SELECT statement as text' }
        return queryDatabase(caller.teamId, readable, parsed.data.sql)
      },
    })
  }
  const client = createAuditedClient(await useDb(), { actorId: caller.actorId, teamId: caller.teamId, source: 'mcp', sourceRef: caller.sourceRef, apiKeyId: caller.apiKeyId, requestId })
  // a grant's user may take only the actions of their role now (a member: create and update)
  const allows = (table: { name: string }, action: WriteAction) => scopeAllows(caller.scopes, table.name, 'write')
    && (!caller.role || can(caller.role, tablePermission(table.name, action)))
  for (const definition of writeToolDefinitions(tables, allows)) {
    tools.set(definition.name, {
      listed: {
        name: definition.name,
        description: definition.description,
        inputSchema: toolInputJsonSchema(definition.schema) as Tool['inputSchema'],
        annotations: { readOnlyHint: false, destructiveHint: definition.action !== 'create', idempotentHint: definition.action !== 'create' },
      },
      run: input => runWriteTool(client, definition, input),
    })
  }
  return tools
}

async function importMcpSdk() {
  const [server, types, transport] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ])
  return { ...server, ...types, ...transport }
}

let sdkImport: ReturnType<typeof importMcpSdk> | undefined

/** The SDK's server side, imported by the first MCP request and kept (not merged again per request). */
const mcpSdk = () => sdkImport ??= importMcpSdk()

/**
 * An MCP server with the key's tools; one per request (the transport is stateless). A call's error,
 * answered inside the 200 as MCP does, is noted for the API log: `unknown_tool` for a tool the
 * caller does not have, `tool_failed` for a tool that answered an error.
 */
function mcpServer({ Server, CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError }: Awaited<ReturnType<typeof mcpSdk>>, tools: Map<string, McpTool>, holder: string, noteError: (code: string) => void): Server {
  const server = new Server({ name: 'team-workspace', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...tools.values()].map(tool => tool.listed) }))
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = tools.get(request.params.name)
    if (!tool) {
      noteError('unknown_tool')
      throw new McpError(ErrorCode.InvalidParams, `No tool named ${request.params.name.slice(0, 100)} for this ${holder} (its scopes decide the tools)`)
    }
    const output = await tool.run(request.params.arguments ?? {})
    const isError = isToolFailure(output)
    if (isError) noteError('tool_failed')
    return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output as Record<string, unknown>, isError }
  })
  return server
}

/**
 * Answers one MCP request (a JSON-RPC message already parsed) for a caller: a stateless Streamable
 * HTTP transport that answers in JSON, and a server with the caller's tools, both dropped after it.
 */
export async function handleMcpRequest(event: H3Event, caller: McpCaller, message: unknown): Promise<Response> {
  const sdk = await mcpSdk()
  const server = mcpServer(sdk, await mcpTools(caller, event.context.apiRequest?.id), caller.grant ? 'connection' : 'API key', code => noteApiErrorCode(event, code))
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  await server.connect(transport)
  try {
    return await transport.handleRequest(toWebRequest(event), { parsedBody: message })
  }
  finally {
    await server.close()
  }
}

/**
 * The request's JSON-RPC message. A batch of more than one message is a 400: every tool call
 * counts against the key's rate limit once per HTTP request, so one request carries one message.
 */
export async function readMcpMessage(event: H3Event): Promise<unknown> {
  let message: unknown
  try {
    message = JSON.parse(await readRawBody(event) ?? '')
  }
  catch {
    throw createError({ statusCode: 400, statusMessage: 'The body must be one JSON-RPC message' })
  }
  if (Array.isArray(message) && message.length !== 1) {
    throw createError({ statusCode: 400, statusMessage: 'Send one JSON-RPC message per request (each request counts against the API key\'s rate limit); batches are not accepted' })
  }
  return message
}
