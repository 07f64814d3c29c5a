import type { H3Event } from 'h3'
import { z } from 'zod'
import { tableNamePattern, uuidPattern } from '#shared/utils/patterns'
import { scopeAllows, type ApiKeyAccess } from '#shared/utils/api-keys'
import type { AuthenticatedKey } from '../credentials/api-keys'
import type { AuditedClient } from '../db/audited-client'
import { recordNotFound } from '../records/records'
import type { TableInfo } from '../records/table-registry'
import { requestHeader } from '../http/request'
import { apiError } from './errors'
import { domainTable } from '../records/table-registry'
import { authApiKey, requireKeyAccess } from '../credentials/api-keys'
import { setting } from '../settings'

/** Whether a request path (or URL from its path on) is the public API's: `/api/v1/…`, and `/rest/v1/…` where PostgREST clients look for it. */
export function isPublicApiPath(path: string): boolean {
  return path.startsWith('/api/v1/') || path.startsWith('/rest/v1/')
}

/**
 * A body of the public API (and of the session routes) is JSON: a request with a body and another
 * Content-Type is a 415 naming the type expected, before anything reads it (a body without a
 * Content-Type is read as JSON). `code`: PostgREST's by default, the session routes' own.
 */
export function requireJsonContentType(event: H3Event, code = 'PGRST107'): void {
  const type = requestHeader(event, 'content-type')?.split(';')[0]?.trim().toLowerCase()
  if (!type || type === 'application/json' || /^application\/[\w.+-]+\+json$/.test(type)) return
  throw apiError(415, `Content-Type ${type.slice(0, 100)} is not supported: send the body as JSON with Content-Type: application/json`, {
    code, hint: 'Set the header Content-Type: application/json',
  })
}

/** A record body: any JSON object; the table's own schema validates its fields. */
export const RecordBody = z.record(z.string(), z.unknown())
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
  const value = getRouterParam(event, 'id')
  if (!value || !uuidPattern.test(value)) throw recordNotFound(table)
  return value.toLowerCase()
}

/** The public origin of links in answers: `BASE_URL`, else the request's own origin. */
export function publicOrigin(event: H3Event): string {
  return (setting('baseUrl') || getRequestURL(event).origin).replace(/\/+$/, '')
}

/** What a key's list and write requests may embed: the domain tables its scopes let it read. */
export function keyAccess(apiKey: Pick<AuthenticatedKey, 'scopes'>): { canRead: (table: string) => boolean } {
  return { canRead: table => scopeAllows(apiKey.scopes, table, 'read') }
}
