import type { EventHandlerRequest, H3Event } from 'h3'
import { z } from 'zod'
import { tableNamePattern } from '#shared/utils/patterns'
import { scopeAllows, type ApiKeyAccess } from '#shared/utils/api-keys'
import type { AuthenticatedKey } from './api-keys'
import type { AuditedClient } from './audited-client'
import type { TableInfo } from './table-registry'
import type { DataRecord } from '#shared/types/data'
import { withRequestId } from './api-log/recorder'

/** Whether a request path (or URL from its path on) is the public API's: `/api/v1/…`, and `/rest/v1/…` where PostgREST clients look for it. */
export function isPublicApiPath(path: string): boolean {
  return path.startsWith('/api/v1/') || path.startsWith('/rest/v1/')
}

/** A record body: any JSON object; the table's own schema validates its fields. */
export const RecordBody = z.record(z.string(), z.unknown())

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
 * A public API handler: errors are answered as `{ error, code, message, details, hint }`, 401s with
 * `WWW-Authenticate: Bearer`. Unexpected errors go on to the app's error handler (a logged 500).
 */
export function definePublicApiHandler<T>(handler: (event: H3Event<EventHandlerRequest>) => Promise<T>) {
  return defineEventHandler(async (event) => {
    try {
      return await handler(event)
    }
    catch (error) {
      if (!isError(error) || error.statusCode >= 500) throw error
      setResponseStatus(event, error.statusCode)
      if (error.statusCode === 401) setResponseHeader(event, 'www-authenticate', 'Bearer')
      // an error is JSON whatever the Accept asked for
      setResponseHeader(event, 'content-type', 'application/json')
      return withRequestId(event, apiErrorBody(error.statusCode, error.statusMessage || error.message, error.data))
    }
  })
}

/** The domain table named in the `table` path parameter; 404 for an unknown, system or non-domain name. */
export async function requireDomainTable(event: H3Event): Promise<TableInfo> {
  const name = getRouterParam(event, 'table') ?? ''
  const table = tableNamePattern.test(name) ? await domainTable(name) : undefined
  if (!table) throw apiError(404, `No table named "${name.slice(0, 64)}" in the public API`, { code: 'PGRST205' })
  return table
}

/**
 * Authenticates the key (401), resolves the path's table (404) and checks that the key's
 * scopes give it `needed` access to that table (403 naming both).
 */
export async function authApiTable(event: H3Event, needed: ApiKeyAccess): Promise<{ client: AuditedClient, table: TableInfo, apiKey: AuthenticatedKey }> {
  const { apiKey, client } = await authApiKey(event)
  // PostgREST clients name the schema (supabase-js: public); this API has no other, and never answers from a different one
  const profile = requestHeader(event, 'accept-profile') ?? requestHeader(event, 'content-profile')
  if (profile !== undefined && profile.trim() !== 'public') {
    throw apiError(406, `The schema must be public: "${profile.slice(0, 63)}" is not one this API has`, { code: 'PGRST106', hint: 'Only the following schemas are exposed: public' })
  }
  const table = await requireDomainTable(event)
  requireKeyAccess(apiKey, table.name, needed)
  return { client, table, apiKey }
}

/** The record id in the `id` path parameter; a malformed id is a 404 (the record cannot exist). */
export function requireRecordId(event: H3Event, table: TableInfo): string {
  return requireIdParam(event, 'id', `${table.name} record`)
}

/** The preferences of a request's `Prefer` headers (`return=representation, count=exact` → a map). */
export interface Preferences {
  return?: 'representation' | 'minimal' | 'headers-only'
  count?: 'exact' | 'planned' | 'estimated'
  resolution?: 'merge-duplicates' | 'ignore-duplicates'
  missing?: 'default' | 'null'
  handling?: 'strict' | 'lenient'
  maxAffected?: number
  tx?: 'commit' | 'rollback'
}

const preferenceValues: Record<string, string[]> = {
  return: ['representation', 'minimal', 'headers-only'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
  handling: ['strict', 'lenient'],
  tx: ['commit', 'rollback'],
}

/**
 * Reads `Prefer`; with `handling=strict`, a preference the API does not know is a 400 (PGRST122),
 * otherwise it is ignored, as PostgREST does.
 */
export function readPreferences(event: H3Event): Preferences {
  const prefer = requestHeader(event, 'prefer') ?? ''
  const tokens = prefer.split(/[,;]/).map(token => token.trim()).filter(Boolean)
  const preferences: Record<string, unknown> = {}
  const unknown: string[] = []
  for (const token of tokens) {
    const [name = '', value = ''] = token.split('=', 2).map(part => part.trim())
    if (name === 'max-affected' && /^\d{1,9}$/.test(value)) preferences.maxAffected = Number(value)
    else if (preferenceValues[name]?.includes(value)) preferences[name] = value
    else unknown.push(token)
  }
  if (preferences.handling === 'strict' && unknown.length) {
    throw apiError(400, `Prefer: ${unknown[0]!.slice(0, 60)} is not a preference this API understands`, { code: 'PGRST122' })
  }
  return preferences as Preferences
}

/** What an answer's rows are sent as: a JSON array, one JSON object, or CSV. */
export type AnswerFormat = { kind: 'array' | 'object' | 'csv', stripNulls: boolean }

/**
 * The format the `Accept` header asks for: `application/json` (or none, or `*\/*`), PostgREST's
 * `application/vnd.pgrst.object+json` (one object) or `text/csv`; anything else is a 406.
 */
export function acceptedFormat(event: H3Event): AnswerFormat {
  const accept = requestHeader(event, 'accept')
  if (!accept) return { kind: 'array', stripNulls: false }
  const ranges = accept.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map(part => part.trim().toLowerCase())
    const q = Number(params.find(param => param.startsWith('q='))?.slice(2) ?? 1)
    return { type, stripNulls: params.includes('nulls=stripped'), q: Number.isFinite(q) ? q : 0 }
  }).filter(range => range.q > 0).sort((a, b) => b.q - a.q)
  for (const { type, stripNulls } of ranges) {
    if (['application/json', '*/*', 'application/*'].includes(type)) return { kind: 'array', stripNulls: false }
    if (type === 'application/vnd.pgrst.array+json') return { kind: 'array', stripNulls }
    if (type === 'application/vnd.pgrst.object+json') return { kind: 'object', stripNulls }
    if (type === 'text/csv' || type === 'text/*') return { kind: 'csv', stripNulls: false }
  }
  throw apiError(406, `None of these media types are available: ${accept.slice(0, 100)}`, {
    code: 'PGRST107', hint: 'Ask for application/json, application/vnd.pgrst.object+json or text/csv',
  })
}

/** One CSV field: quoted when it holds a comma, a quote or a line break; objects as JSON. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value)
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** Rows as CSV with a header line of their keys. */
export function recordsCsv(rows: DataRecord[]): string {
  const keys = Object.keys(rows[0] ?? {})
  return [keys.map(csvField).join(','), ...rows.map(row => keys.map(key => csvField(row[key])).join(','))].join('\n')
}

/**
 * Rows in the format asked for: an array, one object (406 `PGRST116` unless exactly one row),
 * or CSV; `null` keys dropped under `nulls=stripped`.
 */
export function answerRows(event: H3Event, rows: DataRecord[], format: AnswerFormat): DataRecord[] | DataRecord | string {
  const shaped = format.stripNulls
    ? rows.map(row => Object.fromEntries(Object.entries(row).filter(([, value]) => value !== null)))
    : rows
  if (format.kind === 'object') {
    if (shaped.length !== 1) {
      throw apiError(406, 'JSON object requested, multiple (or no) rows returned', {
        code: 'PGRST116', details: `The result contains ${shaped.length} rows`,
      })
    }
    setResponseHeader(event, 'content-type', 'application/vnd.pgrst.object+json; charset=utf-8')
    return shaped[0]!
  }
  if (format.kind === 'csv') {
    setResponseHeader(event, 'content-type', 'text/csv; charset=utf-8')
    return recordsCsv(shaped)
  }
  return shaped
}

/** The public origin of links in answers: `BASE_URL`, else the request's own origin. */
export function publicOrigin(event: H3Event): string {
  return (setting('baseUrl') || getRequestURL(event).origin).replace(/\/+$/, '')
}

/** What a key's list and write requests may embed: the domain tables its scopes let it read. */
export function keyAccess(apiKey: Pick<AuthenticatedKey, 'scopes'>): { canRead: (table: string) => boolean } {
  return { canRead: table => scopeAllows(apiKey.scopes, table, 'read') }
}
