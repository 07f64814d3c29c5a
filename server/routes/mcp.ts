import { noteMcpCall } from '~~/server/utils/api-log/recorder'

// POST /mcp: the Model Context Protocol server for AI agents (Streamable HTTP, stateless), with a team API key.
export default definePublicApiHandler(async (event) => {
  const { apiKey } = await authApiKey(event)
  if (event.method !== 'POST') {
    // stateless: no server-sent event stream to open (GET) and no session to end (DELETE)
    setResponseHeader(event, 'allow', 'POST')
    throw createError({ statusCode: 405, statusMessage: 'The MCP endpoint answers POST only (stateless Streamable HTTP)' })
  }
  const message = await readMcpMessage(event)
  noteMcpCall(event, message)
  return handleMcpRequest(event, apiKey, message)
})
