import type { NitroErrorHandler } from 'nitropack'

/** Seconds a client is told to wait while the database cannot be reached. */
const retryAfterSeconds = 5

/**
 * API routes answer every error as JSON `{ error, status_code }` with no stack trace;
 * anything unexpected is a 500 with a generic message (and is logged). While the database
 * cannot be reached, every route answers 503 (the pool reconnects by itself once it is back).
 * Other paths fall through to Nuxt's error page.
 */
const errorHandler: NitroErrorHandler = (error, event) => {
  if (isConnectionError(error)) {
    console.error('[db] unavailable:', event.method, event.path, (error.cause as Error | undefined)?.message ?? error.message)
    setResponseHeader(event, 'retry-after', retryAfterSeconds)
    setResponseStatus(event, 503)
    setResponseHeader(event, 'content-type', 'application/json')
    return send(event, JSON.stringify({ error: 'The database is unavailable; try again in a few seconds', status_code: 503 }))
  }
  if (!event.path.startsWith('/api/')) return
  const statusCode = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500
  const isUnexpected = statusCode >= 500 && !error.statusMessage
  if (isUnexpected || error.unhandled) console.error('[api]', event.method, event.path, error.cause ?? error)
  const message = statusCode === 500 && (isUnexpected || error.unhandled)
    ? 'Internal server error'
    : error.statusMessage || error.message || 'Request failed'
  setResponseStatus(event, statusCode)
  setResponseHeader(event, 'content-type', 'application/json')
  return send(event, JSON.stringify({ error: message, status_code: statusCode }))
}

export default errorHandler
