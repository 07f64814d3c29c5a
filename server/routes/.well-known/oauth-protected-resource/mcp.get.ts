import { oauthOrigin } from '~~/server/utils/oauth/config'
import { protectedResourceMetadata } from '~~/server/utils/oauth/metadata'

// GET /.well-known/oauth-protected-resource/mcp (RFC 9728): what protects /mcp and who issues its tokens.
export default defineEventHandler((event) => {
  setResponseHeaders(event, { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=300' })
  return protectedResourceMetadata(oauthOrigin(event))
})
