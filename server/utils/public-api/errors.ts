import type { EventHandlerRequest, H3Event } from 'h3'
import { withRequestId } from '../api-log/recorder'
import { settleRateLimit } from '../credentials/rate-limits'

/** The fields of an error answer besides its message: a stable code, and details and a hint when there are some. */
export interface ApiErrorFields {
  code?: string
  details?: string | null
  hint?: string | null
}

/** An HTTP error with PostgREST's fields: `code` (SQLSTATE, `PGRST…` or the API's own), `details`, `hint`. */
export function apiError(statusCode: number, message: string, fields: ApiErrorFields = {}) {
  return createError({ statusCode, statusMessage: message, data: fields })
}

/** The API's own code of an error that carries none, by status. */
const codesByStatus: Record<number, string> = {
  400: 'bad_request', 401: 'invalid_api_key', 403: '42501', 404: 'not_found', 405: 'method_not_allowed',
  406: 'PGRST107', 409: 'conflict', 412: 'precondition_failed', 413: 'payload_too_large',
  415: 'PGRST107', 422: 'idempotency_key_reused', 429: 'rate_limited', 503: 'database_unavailable',
}

/**
 * The one error body of the public API: `{ error, code, message, details, hint }`; `error` and
 * `message` are both the message (PostgREST clients read `message`, older integrations `error`).
 */
export function apiErrorBody(statusCode: number, message: string, data?: unknown) {
  const fields = (data && typeof data === 'object' ? data : {}) as ApiErrorFields
  return {
    error: message,
    code: typeof fields.code === 'string' ? fields.code : codesByStatus[statusCode] ?? (statusCode >= 500 ? 'internal_error' : 'bad_request'),
    message,
    details: typeof fields.details === 'string' ? fields.details : null,
    hint: typeof fields.hint === 'string' ? fields.hint : null,
  }
}

/**
 * A public API handler: errors are answered as `{ error, code, message, details, hint, request_id }`, 401s with
 * `WWW-Authenticate: Bearer`. Unexpected errors go on to the app's error handler (a logged 500).
 */
export function definePublicApiHandler<T>(handler: (event: H3Event<EventHandlerRequest>) => Promise<T>) {
  return defineEventHandler(async (event) => {
    try {
      const answer = await handler(event)
      await settleRateLimit(event)
      return answer
    }
    catch (error) {
      await settleRateLimit(event)
      if (!isError(error) || error.statusCode >= 500) throw error
      setResponseStatus(event, error.statusCode)
      // a route may have said more (/mcp names its OAuth metadata)
      if (error.statusCode === 401 && !getResponseHeader(event, 'www-authenticate')) setResponseHeader(event, 'www-authenticate', 'Bearer')
      // an error is JSON whatever the Accept asked for
      setResponseHeader(event, 'content-type', 'application/json')
      return withRequestId(event, apiErrorBody(error.statusCode, error.statusMessage || error.message, error.data))
    }
  })
}

/** A 400 about the query language or a body (PostgREST's `PGRST100` unless another code is given). */
export const badRequest = (message: string, code = 'PGRST100') => apiError(400, message, { code })

/** A database error a read's input caused (a text search or pattern the database cannot parse, an unknown configuration): a 400 with its SQLSTATE. */
export async function readErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  }
  catch (error) {
    const { code, message } = (error ?? {}) as { code?: string, message?: string }
    if (code && /^(22|42601|42704|2201B)/.test(code)) throw apiError(400, `Invalid filter: ${message ?? code}`, { code })
    throw error
  }
}
