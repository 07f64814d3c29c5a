import type { H3Event } from 'h3'
import type { User } from '#auth-utils'
import { can, type Permission, type Role } from '#shared/permissions'
import type { Team } from '#shared/types/api'
import { createAuditedClient, type AuditedClient } from '../db/audited-client'
import { isSessionLive } from './sessions'
import { useDb } from '../db/database'
import { requireIdParam } from '../validation'

export interface TeamContext {
  user: User
  team: Team
  role: Role
  client: AuditedClient
}

/** The signed-in user, or a 401. */
export async function requireUser(event: H3Event): Promise<User> {
  const session = await getUserSession(event)
  if (!session.user) throw createError({ statusCode: 401, statusMessage: 'Sign in first' })
  // a sealed cookie outlives sign-out unless its server-side session is checked every time
  if (!await isSessionLive(await useDb(), session)) throw createError({ statusCode: 401, statusMessage: 'This session has ended; sign in again' })
  return session.user
}

/** The signed-in user and an audited client bound to them but to no team (creating a team, accepting an invitation); 401 without a session. */
export async function authSignedIn(event: H3Event): Promise<{ user: User, client: AuditedClient }> {
  const user = await requireUser(event)
  return { user, client: createAuditedClient(await useDb(), { actorId: user.id, teamId: null, source: 'web' }) }
}

/**
 * Authenticates a browser session for the team in the `teamId` path parameter:
 * 401 without a session, 404 when the team does not exist or the caller is not a member,
 * 403 when the caller's role lacks `permission` (null: any member).
 * Returns an audited client with source `web`.
 */
export async function authUser(event: H3Event, permission: Permission | null): Promise<TeamContext> {
  const user = await requireUser(event)
  const teamId = requireIdParam(event, 'teamId', 'Team')
  const db = await useDb()
  const { rows } = await db.query<TeamContext['team'] & { role: Role }>(
    `select t.id, t.name, t.webhook_url, t.activity_retention_days, t.api_log_retention_days, t.created_at, m.role
     from public.teams t join public.team_members m on m.team_id = t.id and m.user_id = $2
     where t.id = $1`,
    [teamId, user.id],
  )
  const membership = rows[0]
  if (!membership) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  const { role, ...team } = membership
  if (permission && !can(role, permission)) {
    throw createError({ statusCode: 403, statusMessage: `Your role (${role}) does not allow ${permission}` })
  }
  const client = createAuditedClient(db, { actorId: user.id, teamId: team.id, source: 'web' })
  return { user, team, role, client }
}
