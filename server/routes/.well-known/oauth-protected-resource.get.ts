import { oauthOrigin } from '~~/server/utils/oauth/config'
import { protectedResourceMetadata } from '~~/server/utils/oauth/metadata'

// GET /.well-known/oauth-protected-resource (RFC 9728, root form): the same document as for /mcp.
export default defineEventHandler((event) => {
  setResponseHeaders(event, { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=300' })
  return protectedResourceMetadata(oauthOrigin(event))
})
