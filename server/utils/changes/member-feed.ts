// The live pages' door: a signed-in member's event stream of their team
// (GET /api/teams/{teamId}/events/stream), the events of the tables their role may view, as plain
// messages (no `event:` line) so that the page's EventSource gets each one in onmessage. A
// member's streams end when they leave the team (checked every few seconds for every open stream
// of the instance, in one statement).
import type { H3Event } from 'h3'
import { can, tablePermission } from '#shared/permissions'
import type { TeamContext } from '../accounts/auth'
import { openEventStream, streamStart } from './sse'
import { useDb } from '../db/database'
import { domainTables } from '../records/table-registry'

const membershipSweepMs = 5_000
/** The open streams' ends, by "team:user". */
const openByMember = new Map<string, Set<(reason: string) => void>>()
let sweeping: ReturnType<typeof setInterval> | undefined

async function sweep() {
  if (!openByMember.size) return
  try {
    const db = await useDb()
    const { rows } = await db.query<{ member: string }>(
      `select m.team_id::text || ':' || m.user_id::text as member from public.team_members m
       where m.team_id::text || ':' || m.user_id::text = any ($1::text[])`,
      [[...openByMember.keys()]],
    )
    const still = new Set(rows.map(row => row.member))
    for (const [member, ends] of openByMember) {
      if (still.has(member)) continue
      for (const end of [...ends]) end('You are no longer a member of this team')
    }
  }
  catch (error) {
    console.error('[changes] could not check the members of open streams:', (error as Error).message)
  }
}

export async function streamMemberEvents(event: H3Event, context: TeamContext, after: string | undefined): Promise<void> {
  const start = streamStart(event, after)
  const tables = new Set((await domainTables()).map(table => table.name).filter(name => can(context.role, tablePermission(name, 'view'))))
  const member = `${context.team.id}:${context.user.id}`
  sweeping ??= setInterval(() => void sweep(), membershipSweepMs)
  sweeping.unref()
  let end: ((reason: string) => void) | undefined
  await openEventStream(event, {
    teamId: context.team.id,
    after: start,
    tables: () => [...tables],
    accepts: stored => tables.has(stored.table),
    typed: false,
    onOpen: (ending) => {
      end = ending
      let ends = openByMember.get(member)
      if (!ends) openByMember.set(member, ends = new Set())
      ends.add(ending)
    },
    onClose: () => {
      const ends = openByMember.get(member)
      if (end) ends?.delete(end)
      if (ends?.size === 0) openByMember.delete(member)
    },
  })
}
