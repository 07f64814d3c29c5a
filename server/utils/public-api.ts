import type { EventHandlerRequest, H3Event } from 'h3'
import { z } from 'zod'
import { tableNamePattern } from '#shared/utils/patterns'
import type { ApiKeyAccess } from '#shared/utils/api-keys'
import type { AuthenticatedKey } from './api-keys'
import type { AuditedClient } from './audited-client'
import type { TableInfo } from './table-registry'

/** A record body: any JSON object; the table's own schema validates its fields. */
export const RecordBody = z.record(z.string(), z.unknown())

/**
 * A public API handler: errors are answered as `{ "error": "<message>" }`, 401s with
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
      return { error: error.statusMessage || error.message }
    }
  })
}

/** The domain table named in the `table` path parameter; 404 for an unknown, system or non-domain name. */
export async function requireDomainTable(event: H3Event): Promise<TableInfo> {
  const name = getRouterParam(event, 'table') ?? ''
  const table = tableNamePattern.test(name) ? await domainTable(name) : undefined
  if (!table) throw createError({ statusCode: 404, statusMessage: `No table named "${name.slice(0, 64)}" in the public API` })
  return table
}

/**
 * Authenticates the bearer key (401), resolves the path's table (404) and checks that the key's
 * scopes give it `needed` access to that table (403 naming both).
 */
export async function authApiTable(event: H3Event, needed: ApiKeyAccess): Promise<{ client: AuditedClient, table: TableInfo, apiKey: AuthenticatedKey }> {
  const { apiKey, client } = await authApiKey(event)
  const table = await requireDomainTable(event)
  requireKeyAccess(apiKey, table.name, needed)
  return { client, table, apiKey }
}

/** The record id in the `id` path parameter; a malformed id is a 404 (the record cannot exist). */
export function requireRecordId(event: H3Event, table: TableInfo): string {
  return requireIdParam(event, 'id', `${table.name} record`)
}
