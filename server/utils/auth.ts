import type { H3Event } from 'h3'
import type { User } from '#auth-utils'
import { can, type Permission, type Role } from '#shared/permissions'
import type { Team } from '#shared/types/api'
import { createAuditedClient, type AuditedClient } from './audited-client'
import { requireSession } from './accounts/session-state'
import { isTwoFactorBlocked, twoFactorBlockedFromSql, twoFactorRequired } from './credentials/principal'

export interface TeamContext {
  user: User
  team: Team
  role: Role
  client: AuditedClient
}

/**
 * The signed-in user, or a 401: without a session, when it has ended (a sealed cookie outlives
 * sign-out unless its server-side session is checked every time), and `mfa_required` while an
 * account with a second factor has given only its password.
 */
export async function requireUser(event: H3Event): Promise<User> {
  return (await requireSession(event)).user
}

/** The signed-in user and an audited client bound to them but to no team (creating a team, accepting an invitation); 401 without a session. */
export async function authSignedIn(event: H3Event): Promise<{ user: User, client: AuditedClient }> {
  const user = await requireUser(event)
  return { user, client: createAuditedClient(await useDb(), { actorId: user.id, teamId: null, source: 'web' }) }
}

/** What a team route allows besides the usual: `twoFactorExempt`, a member refused by the team's two-factor policy too (reading the policy, leaving the team). */
export interface AuthUserOptions {
  twoFactorExempt?: boolean
}

/**
 * Authenticates a browser session for the team in the `teamId` path parameter:
 * 401 without a session, 404 when the team does not exist or the caller is not a member,
 * 403 `two_factor_required` when the team's two-factor policy covers the caller, who has no
 * verified factor, and its grace period is over (unless `twoFactorExempt`), 403 when the
 * caller's role lacks `permission` (null: any member). The policy is read in the same statement
 * as the membership, by the credential pipeline's rule. Returns an audited client with source `web`.
 */
export async function authUser(event: H3Event, permission: Permission | null, options: AuthUserOptions = {}): Promise<TeamContext> {
  const user = await requireUser(event)
  const teamId = requireIdParam(event, 'teamId', 'Team')
  const db = await useDb()
  const { rows } = await db.query<TeamContext['team'] & { role: Role, blocked_from_ms: number | null }>(
    `select t.id, t.name, t.webhook_url, t.activity_retention_days, t.api_log_retention_days, t.created_at, m.role,
       ${twoFactorBlockedFromSql('m.user_id')} as blocked_from_ms
     from public.teams t join public.team_members m on m.team_id = t.id and m.user_id = $2
     where t.id = $1`,
    [teamId, user.id],
  )
  const membership = rows[0]
  if (!membership) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  const { role, blocked_from_ms: blockedFrom, ...team } = membership
  if (!options.twoFactorExempt && isTwoFactorBlocked(blockedFrom)) {
    throw createError({ statusCode: 403, statusMessage: twoFactorRequired.memberMessage, data: { code: twoFactorRequired.code } })
  }
  if (permission && !can(role, permission)) {
    throw createError({ statusCode: 403, statusMessage: `Your role (${role}) does not allow ${permission}` })
  }
  const client = createAuditedClient(db, { actorId: user.id, teamId: team.id, source: 'web' })
  return { user, team, role, client }
}
