import { serveOAuth } from '~~/server/utils/oauth/router'

// /oauth/token: served by the MCP SDK's authorization server handler (server/utils/oauth/router.ts).
export default defineEventHandler(serveOAuth)
