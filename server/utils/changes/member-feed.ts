// The live pages' door: a signed-in member's event stream of their team
// (GET /api/teams/{teamId}/events/stream), the events of the tables their role may view, as plain
// messages (no `event:` line) so that the page's EventSource gets each one in onmessage. A
// member's streams end when they leave the team or the team's two-factor policy refuses them (checked every few seconds for every open stream
// of the instance, in one statement).
import type { H3Event } from 'h3'
import { can, tablePermission } from '#shared/permissions'
import type { TeamContext } from '../accounts/auth'
import { openEventStream, streamStart } from './sse'
import { useDb } from '../db/database'
import { domainTables } from '../records/table-registry'
import { twoFactorBlockedFromSql, twoFactorRequired } from '../credentials/principal'
import { logger } from '../log/logger'
import { schedule, type Job } from '../jobs/scheduler'

const log = logger('changes')

const membershipSweepMs = 5_000
/** The open streams' ends, by "team:user". */
const openByMember = new Map<string, Set<(reason: string) => void>>()
let sweeping: Job | undefined

async function sweep() {
  if (!openByMember.size) return
  try {
    const db = await useDb()
    const { rows } = await db.query<{ member: string, blocked: boolean }>(
      `select m.team_id::text || ':' || m.user_id::text as member,
         coalesce((${twoFactorBlockedFromSql('m.user_id')}) <= extract(epoch from now()) * 1000, false) as blocked
       from public.team_members m join public.teams t on t.id = m.team_id
       where m.team_id::text || ':' || m.user_id::text = any ($1::text[])`,
      [[...openByMember.keys()]],
    )
    const still = new Map(rows.map(row => [row.member, row.blocked]))
    for (const [member, ends] of openByMember) {
      const blocked = still.get(member)
      if (blocked === false) continue
      const reason = blocked ? twoFactorRequired.memberMessage : 'You are no longer a member of this team'
      for (const end of [...ends]) end(reason)
    }
  }
  catch (error) {
    log.error('Could not check the members of open streams', { error })
  }
}

export async function streamMemberEvents(event: H3Event, context: TeamContext, after: string | undefined): Promise<void> {
  const start = streamStart(event, after)
  const tables = new Set((await domainTables()).map(table => table.name).filter(name => can(context.role, tablePermission(name, 'view'))))
  const member = `${context.team.id}:${context.user.id}`
  sweeping ??= schedule({ name: 'member-stream-sweep', everyMs: membershipSweepMs, runAtStart: false, run: sweep })
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
