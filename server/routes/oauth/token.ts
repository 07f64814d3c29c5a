import { oauthOrigin } from '~~/server/utils/oauth/config'
import { oauthApp } from '~~/server/utils/oauth/router'

// /oauth/token: served by the MCP SDK's authorization server handler (server/utils/oauth/router.ts).
export default defineEventHandler(event => callNodeListener(oauthApp(oauthOrigin(event)), event.node.req, event.node.res))
