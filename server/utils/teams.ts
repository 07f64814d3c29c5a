import type { User } from '#auth-utils'
import { can, type Role } from '#shared/permissions'
import type { Member, Team } from '#shared/types/api'
import type { Database, Queryable } from './db'
import { createAuditedClient, type AuditedClient } from './audited-client'
import { webhookUrlProblem } from './url-guard'
import { ensureWebhookSecret, webhookSettings } from './webhooks'

const teamColumns = 'id, name, webhook_url, created_at'

/** Creates a team whose first member, the creator, is its owner. */
export async function createTeam(db: Database, user: User, name: string): Promise<Team> {
  const client = createAuditedClient(db, { actorId: user.id, teamId: null, source: 'web' })
  return client.transaction(async (tx) => {
    const { rows } = await tx.query<Team>(`insert into public.teams (name) values ($1) returning ${teamColumns}`, [name])
    const team = rows[0]!
    await tx.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'owner')`, [team.id, user.id])
    await ensureWebhookSecret(tx, team.id)
    return team
  })
}

/** Changes a team's name and/or webhook URL (`null` clears it). */
export async function updateTeam(client: AuditedClient, teamId: string, changes: { name?: string, webhook_url?: string | null }): Promise<Team> {
  // the SSRF guard at save time (connect time checks again, DNS answers included)
  const problem = changes.webhook_url && await webhookUrlProblem(changes.webhook_url, webhookSettings().allowPrivateNetworks)
  if (problem) throw createError({ statusCode: 400, statusMessage: `webhook_url: ${problem}` })
  const { rows } = await client.query<Team>(
    `update public.teams
     set name = coalesce($2, name),
         webhook_url = case when $3::boolean then $4 else webhook_url end
     where id = $1
     returning ${teamColumns}`,
    [teamId, changes.name ?? null, changes.webhook_url !== undefined, changes.webhook_url ?? null],
  )
  if (!rows[0]) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  return rows[0]
}

const memberColumns = `m.user_id, p.name, p.email, m.role, m.created_at`

/** The team's members, owners first. */
export async function listMembers(client: AuditedClient, teamId: string): Promise<Member[]> {
  const { rows } = await client.read<Member>(
    `select ${memberColumns}
     from public.team_members m join public.profiles p on p.id = m.user_id
     where m.team_id = $1
     order by array_position(array['owner', 'admin', 'member'], m.role), p.name`,
    [teamId],
  )
  return rows
}

interface MemberChange {
  teamId: string
  userId: string
}

/**
 * Locks the team's memberships for the rest of the transaction and returns the actor's current role,
 * the target's role and the owner count, so that concurrent changes see each other's result.
 */
async function lockMembership(tx: Queryable, actorId: string, teamId: string, userId: string) {
  const { rows } = await tx.query<{ user_id: string, role: Role }>(
    'select user_id, role from public.team_members where team_id = $1 order by user_id for update',
    [teamId],
  )
  const actor = rows.find(row => row.user_id === actorId)
  if (!actor) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  const target = rows.find(row => row.user_id === userId)
  if (!target) throw createError({ statusCode: 404, statusMessage: 'Member not found' })
  return { actorRole: actor.role, target, owners: rows.filter(row => row.role === 'owner').length }
}

/** Changes a member's role: an admin may not change an owner nor grant owner; a team keeps at least one owner. */
export async function updateMemberRole(client: AuditedClient, change: MemberChange & { role: Role }): Promise<Member> {
  return client.transaction(async (tx) => {
    const { actorRole, target, owners } = await lockMembership(tx, client.context.actorId!, change.teamId, change.userId)
    if (!can(actorRole, 'members.update')) {
      throw createError({ statusCode: 403, statusMessage: `Your role (${actorRole}) does not allow members.update` })
    }
    if (actorRole !== 'owner' && change.role === 'owner') {
      throw createError({ statusCode: 403, statusMessage: 'Only an owner can grant the owner role' })
    }
    if (target.role === 'owner' && actorRole !== 'owner') {
      throw createError({ statusCode: 403, statusMessage: 'Only an owner can change an owner' })
    }
    if (target.role === 'owner' && change.role !== 'owner' && owners === 1) {
      throw createError({ statusCode: 409, statusMessage: 'The team must keep at least one owner' })
    }
    await tx.query('update public.team_members set role = $3 where team_id = $1 and user_id = $2', [change.teamId, change.userId, change.role])
    const { rows } = await tx.query<Member>(
      `select ${memberColumns} from public.team_members m join public.profiles p on p.id = m.user_id
       where m.team_id = $1 and m.user_id = $2`,
      [change.teamId, change.userId],
    )
    return rows[0]!
  })
}

/** Removes a member: an admin may not remove an owner; the last owner cannot leave. */
export async function removeMember(client: AuditedClient, change: MemberChange): Promise<void> {
  await client.transaction(async (tx) => {
    const { actorRole, target, owners } = await lockMembership(tx, client.context.actorId!, change.teamId, change.userId)
    const isSelf = client.context.actorId === change.userId
    if (!isSelf && !can(actorRole, 'members.remove')) {
      throw createError({ statusCode: 403, statusMessage: `Your role (${actorRole}) does not allow members.remove` })
    }
    if (target.role === 'owner' && actorRole !== 'owner' && !isSelf) {
      throw createError({ statusCode: 403, statusMessage: 'Only an owner can remove an owner' })
    }
    if (target.role === 'owner' && owners === 1) {
      throw createError({ statusCode: 409, statusMessage: 'The last owner cannot leave the team' })
    }
    await tx.query('delete from public.team_members where team_id = $1 and user_id = $2', [change.teamId, change.userId])
  })
}
