import { STATUS_CODES } from 'node:http'
import type { H3Event } from 'h3'
import type { NitroErrorHandler } from 'nitropack'
import { apiLogSource, withRequestId } from '~~/server/utils/api-log/recorder'

/** Seconds a client is told to wait while the database cannot be reached. */
const retryAfterSeconds = 5

/**
 * The error body: the public API's `{ error, code, message, details, hint, request_id }`, the
 * session routes' `{ error, code }` (and `/mcp`'s with its `request_id`).
 */
function errorBody(event: H3Event, statusCode: number, message: string, data?: unknown): string {
  const body = apiErrorBody(statusCode, message, data)
  // a refusal for want of re-authentication names the methods the account may use
  const methods = (data as { methods?: unknown } | undefined)?.methods
  const sessionBody = Array.isArray(methods) ? { error: body.error, code: body.code, methods } : { error: body.error, code: body.code }
  return JSON.stringify(withRequestId(event, isPublicApiPath(event.path) ? body : sessionBody))
}

/**
 * API routes answer every error as JSON with a stable `code` and no stack trace;
 * anything unexpected is a 500 with a generic message (and is logged). While the database
 * cannot be reached, every route answers 503 (the pool reconnects by itself once it is back).
 * Other paths fall through to Nuxt's error page.
 */
const errorHandler: NitroErrorHandler = (error, event) => {
  if (isConnectionError(error)) {
    logger('db').error('The database is unavailable', { ...requestLogFields(event), method: event.method, path: event.path, error: (error.cause as Error | undefined)?.message ?? error.message })
    setResponseHeader(event, 'retry-after', retryAfterSeconds)
    setResponseStatus(event, 503)
    setResponseHeader(event, 'content-type', 'application/json')
    return send(event, errorBody(event, 503, 'The database is unavailable; try again in a few seconds', { code: '08006' }))
  }
  // the API log's paths (/mcp too) answer their errors as JSON, with the code the log records
  if (!event.path.startsWith('/api/') && !isPublicApiPath(event.path) && !apiLogSource(event.path)) return
  const statusCode = error.statusCode && error.statusCode >= 400 ? error.statusCode : 500
  const isUnexpected = statusCode >= 500 && !error.statusMessage
  if (isUnexpected || error.unhandled) logger('api').error('An unexpected error', { ...requestLogFields(event), method: event.method, path: event.path, status: statusCode, error: error.cause ?? error })
  const message = statusCode === 500 && (isUnexpected || error.unhandled)
    ? 'Internal server error'
    : error.statusMessage || error.message || 'Request failed'
  // the status line carries the status's own short text (h3 put the whole message there); the body says why
  setResponseStatus(event, statusCode, STATUS_CODES[statusCode] ?? 'Error')
  setResponseHeader(event, 'content-type', 'application/json')
  return send(event, errorBody(event, statusCode, message, error.data))
}

export default errorHandler
