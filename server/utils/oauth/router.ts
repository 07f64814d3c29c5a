import type { H3Event } from 'h3'
import { ClientProblem, findClient } from './clients'
import { oauthOrigin } from './config'
import { GrantProvider } from './provider'
import { redirectUriRegistered } from './redirect-uris'
import { requestHeader } from '../http/request'

type NodeListener = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, next: (error?: Error) => void) => void

/** The limits of the SDK's own per-address limiters (in memory, per instance), per 15 minutes. */
const limits = { authorize: 300, token: 300, revoke: 100 }
const perWindow = (max: number) => ({ windowMs: 15 * 60 * 1000, max, validate: false })

/** Where the consent page shows a problem of the request that must not be sent to its redirect URI. */
const problemPage = (message: string) => `/oauth/consent?error=${encodeURIComponent(message.slice(0, 300))}`

/**
 * Before the SDK's authorization handler (GET or POST): a client_id that is unknown (or whose
 * metadata document fails) and a redirect_uri the client did not register are shown on the
 * consent page of this app, never redirected to (the SDK would answer them as JSON).
 */
function checkClientAndRedirect(): NodeListener {
  return (req, res, next) => {
    // a GET carries the request in its query, a POST in its form (already parsed, see serveOAuth)
    const fields = req.method === 'GET'
      ? Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams)
      : ((req as { body?: unknown }).body ?? {}) as Record<string, unknown>
    const text = (value: unknown) => typeof value === 'string' ? value : null
    const clientId = text(fields.client_id)
    const redirectUri = text(fields.redirect_uri)
    const send = (message: string) => {
      res.statusCode = 302
      res.setHeader('location', problemPage(message))
      res.setHeader('cache-control', 'no-store')
      res.end()
    }
    if (req.method !== 'GET' && req.method !== 'POST') return next()
    if (!clientId) return send('The app that sent you here gave no client_id.')
    findClient(clientId).then((client) => {
      if (!client) return send('The app that sent you here is not registered with this server (unknown client_id).')
      if (redirectUri === null && client.redirect_uris.length !== 1) return send('The app that sent you here gave no redirect_uri.')
      if (redirectUri !== null && !redirectUriRegistered(redirectUri, client.redirect_uris)) {
        return send(`The app that sent you here asked to return to an address it did not register (${redirectUri.slice(0, 200)}); nothing was sent there.`)
      }
      next()
    }, (error: unknown) => {
      if (error instanceof ClientProblem) return send(error.message)
      next(error instanceof Error ? error : new Error(String(error)))
    })
  }
}

const apps = new Map<string, Promise<NodeListener>>()

/**
 * The authorization server's endpoints, served by the MCP SDK's handlers (an express app for each
 * public origin, usually one) on our provider: /oauth/authorize, /oauth/token, /oauth/register
 * (RFC 7591, public clients) and /oauth/revoke (RFC 7009). Express and the handlers are imported
 * on the first OAuth request, not at start-up.
 */
export function oauthApp(origin: string): Promise<NodeListener> {
  let app = apps.get(origin)
  if (!app) {
    app = buildOAuthApp(origin)
    apps.set(origin, app)
  }
  return app
}

async function buildOAuthApp(origin: string): Promise<NodeListener> {
  const [{ default: express }, { authorizationHandler }, { tokenHandler }, { clientRegistrationHandler }, { revocationHandler }] = await Promise.all([
    import('express'),
    import('@modelcontextprotocol/sdk/server/auth/handlers/authorize.js'),
    import('@modelcontextprotocol/sdk/server/auth/handlers/token.js'),
    import('@modelcontextprotocol/sdk/server/auth/handlers/register.js'),
    import('@modelcontextprotocol/sdk/server/auth/handlers/revoke.js'),
  ])
  const provider = new GrantProvider(origin)
  const server = express()
  server.disable('x-powered-by')
  server.use('/oauth/authorize', checkClientAndRedirect())
  server.use('/oauth/authorize', authorizationHandler({ provider, rateLimit: perWindow(limits.authorize) }))
  server.use('/oauth/token', tokenHandler({ provider, rateLimit: perWindow(limits.token) }))
  server.use('/oauth/register', clientRegistrationHandler({ clientsStore: provider.clientsStore, clientSecretExpirySeconds: 0, rateLimit: { windowMs: 60 * 60 * 1000, max: 100, validate: false } }))
  server.use('/oauth/revoke', revocationHandler({ provider, rateLimit: perWindow(limits.revoke) }))
  return server as unknown as NodeListener
}

/** A JSON or form body as the SDK's handlers expect it in `req.body`, or undefined when it is neither. */
function parsedBody(raw: string, contentType: string): unknown {
  if (/^application\/x-www-form-urlencoded\b/i.test(contentType)) return Object.fromEntries(new URLSearchParams(raw))
  if (/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) {
    try {
      return JSON.parse(raw)
    }
    catch {
      return undefined
    }
  }
  return undefined
}

/**
 * Serves one request of the authorization server's endpoints. The body was already read (within
 * the app's 1 MiB limit) by the body-limit middleware, so it is parsed here and put where the
 * SDK's body parsers would have put it (they skip a request whose stream is consumed).
 */
export async function serveOAuth(event: H3Event): Promise<void> {
  const raw = event.method === 'POST' ? await readRawBody(event) : undefined
  if (raw !== undefined) {
    const body = parsedBody(raw, requestHeader(event, 'content-type') ?? '')
    if (body !== undefined) Object.assign(event.node.req, { body })
  }
  await callNodeListener(await oauthApp(oauthOrigin(event)), event.node.req, event.node.res)
}
