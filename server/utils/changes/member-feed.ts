// The live pages' door: a signed-in member's event stream of their team
// (GET /api/teams/{teamId}/events/stream), the events of the tables their role may view, as plain
// messages (no `event:` line) so that the page's EventSource gets each one in onmessage.
import type { H3Event } from 'h3'
import { can, tablePermission } from '#shared/permissions'
import type { TeamContext } from '../auth'
import { openEventStream, streamStart } from './sse'

export async function streamMemberEvents(event: H3Event, context: TeamContext, after: string | undefined): Promise<void> {
  const start = streamStart(event, after)
  const tables = new Set((await domainTables()).map(table => table.name).filter(name => can(context.role, tablePermission(name, 'view'))))
  await openEventStream(event, {
    teamId: context.team.id,
    after: start,
    tables: () => [...tables],
    accepts: stored => tables.has(stored.table),
    typed: false,
  })
}
