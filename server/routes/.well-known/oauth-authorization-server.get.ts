import { oauthOrigin } from '~~/server/utils/oauth/config'
import { authorizationServerMetadata } from '~~/server/utils/oauth/metadata'

// GET /.well-known/oauth-authorization-server (RFC 8414): the authorization server's endpoints and what it supports.
export default defineEventHandler((event) => {
  setResponseHeaders(event, { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=300' })
  return authorizationServerMetadata(oauthOrigin(event))
})
