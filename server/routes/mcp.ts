import { accessTokenPrefix, oauthOrigin, resourceMetadataUrl } from '~~/server/utils/oauth/config'
import { noteMcpCall } from '~~/server/utils/api-log/recorder'
import { authGrantToken, InvalidAccessToken } from '~~/server/utils/oauth/verify'

/**
 * Who the request acts as: an OAuth access token (by its prefix) is verified as a grant, anything
 * else as a team API key, exactly as on the public API. A 401 says where the protected resource
 * metadata is (RFC 9728), and error="invalid_token" when a token was sent.
 */
async function authenticate(event: Parameters<typeof readMcpMessage>[0]): Promise<McpCaller> {
  const header = requestHeader(event, 'authorization')
  const bearer = header ? /^Bearer +(\S+) *$/i.exec(header)?.[1] : undefined
  const sentToken = Boolean(header || requestHeader(event, 'apikey'))
  const challenge = `Bearer resource_metadata="${resourceMetadataUrl(oauthOrigin(event))}"${sentToken ? ', error="invalid_token"' : ''}`
  try {
    if (bearer?.startsWith(accessTokenPrefix)) {
      try {
        return grantCaller(await authGrantToken(event, bearer))
      }
      catch (error) {
        if (!(error instanceof InvalidAccessToken)) throw error
        enforceRateLimit(event, await countAddressRequest(await useDb(), event), 'this address')
        throw createError({ statusCode: 401, statusMessage: error.message, data: error.code ? { code: error.code } : undefined })
      }
    }
    return keyCaller((await authApiKey(event)).apiKey)
  }
  catch (error) {
    if (isError(error) && error.statusCode === 401) setResponseHeader(event, 'www-authenticate', challenge)
    throw error
  }
}

// POST /mcp: the Model Context Protocol server for AI agents (Streamable HTTP, stateless), with a
// team API key or an OAuth access token. The verified grant of a token request is `caller.grant`.
export default definePublicApiHandler(async (event) => {
  const caller = await authenticate(event)
  if (event.method !== 'POST') {
    // stateless: no server-sent event stream to open (GET) and no session to end (DELETE)
    setResponseHeader(event, 'allow', 'POST')
    throw createError({ statusCode: 405, statusMessage: 'The MCP endpoint answers POST only (stateless Streamable HTTP)' })
  }
  const message = await readMcpMessage(event)
  noteMcpCall(event, message)
  return handleMcpRequest(event, caller, message)
})
