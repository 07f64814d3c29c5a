// The change feed's key doors: GET /api/v1/events (a page) and GET /api/v1/events/stream (SSE).
// A key sees the events of its team's tables that its scopes let it read.
import type { H3Event } from 'h3'
import { z } from 'zod'
import type { ChangeEvent } from '#shared/types/changes'
import { scopeAllows } from '#shared/utils/api-keys'
import type { AuthenticatedKey } from '../credentials/api-keys'
import { feedStart, isEventId, readTeamEvents, type StoredEvent } from './feed'
import { admitKeyStream, type KeyConnection } from './key-watch'
import { openEventStream, streamStart } from './sse'
import { domainTable, domainTables } from '../records/table-registry'
import { useDb } from '../db/database'
import { publicOrigin } from '../public-api/routes'

const typePattern = /^([a-z_][a-z0-9_]{0,62})\.(created|updated|deleted)$/

export const FeedQuery = z.object({
  after: z.string().max(64).optional(),
  types: z.string().max(2000).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
})

/** The event types asked for, each `<table>.created|updated|deleted` of a domain table; 400 naming the first that is not. */
export async function parseEventTypes(types: string | undefined): Promise<string[] | undefined> {
  if (types === undefined || types.trim() === '') return undefined
  const list = types.split(',').map(type => type.trim()).filter(Boolean)
  for (const type of list) {
    const match = typePattern.exec(type)
    if (!match || !await domainTable(match[1]!)) {
      throw createError({ statusCode: 400, statusMessage: `types: "${type.slice(0, 80)}" is not an event type (<table>.created, .updated or .deleted of a table of this API)` })
    }
  }
  return list
}

/** The domain tables a key may read (now: the registry may grow). */
async function readableTables(apiKey: Pick<AuthenticatedKey, 'scopes'>): Promise<string[]> {
  return (await domainTables()).map(table => table.name).filter(name => scopeAllows(apiKey.scopes, name, 'read'))
}

/** A page of the key's team's events after `after`, with the URL of the next page. */
export async function listKeyEvents(event: H3Event, apiKey: AuthenticatedKey, query: z.output<typeof FeedQuery>): Promise<ChangeEvent[]> {
  const after = query.after === undefined || query.after === '0' ? feedStart : query.after
  if (!isEventId(after)) throw createError({ statusCode: 400, statusMessage: 'after: not an event id of this feed (32 hexadecimal characters, or 0 for the oldest)' })
  const types = await parseEventTypes(query.types)
  const page = await readTeamEvents(await useDb(), apiKey.team_id, { after, tables: await readableTables(apiKey), types, limit: query.limit })
  const events = page.map(stored => stored.event)
  const next = new URLSearchParams({ after: events.at(-1)?.id ?? after, limit: String(query.limit) })
  if (types) next.set('types', types.join(','))
  setResponseHeader(event, 'link', `<${publicOrigin(event)}/api/v1/events?${next}>; rel="next"`)
  return events
}

/** The key's event stream: replay from Last-Event-ID or `after`, then live; ends when the key is revoked. */
export async function streamKeyEvents(event: H3Event, apiKey: AuthenticatedKey, query: z.output<typeof FeedQuery>): Promise<void> {
  const after = streamStart(event, query.after)
  const types = await parseEventTypes(query.types)
  let tables = await readableTables(apiKey)
  const registry = new Set((await domainTables()).map(table => table.name))
  const connection: KeyConnection = {
    keyId: apiKey.id,
    scopes: apiKey.scopes,
    close: () => {},
  }
  const release = await admitKeyStream(connection)
  const accepts = (stored: StoredEvent) => registry.has(stored.table) && scopeAllows(connection.scopes, stored.table, 'read')
    && (!types || types.includes(stored.event.type))
  tables = tables.filter(table => registry.has(table))
  await openEventStream(event, {
    teamId: apiKey.team_id,
    after,
    tables: () => tables,
    types,
    accepts,
    onOpen: (end) => {
      connection.close = end
    },
    onClose: release,
  })
}
