import type { z } from 'zod'
import type { UpdateTeamBody } from '#shared/utils/schemas'
import { can, type Permission, type Role } from '#shared/permissions'
import type { Member, Team } from '#shared/types/api'
import type { Queryable } from '../db/db-drivers'
import { requireActor, requireTeam, type AuditedClient } from '../db/audited-client'
import { webhookUrlProblem } from '../http/url-guard'
import { ensureWebhookSecret } from '../webhooks/webhooks'
import { webhookSettings } from '../webhooks/delivery-settings'

const teamColumns = 'id, name, webhook_url, activity_retention_days, api_log_retention_days, created_at'

/** Creates a team whose first member, the client's actor, is its owner. */
export async function createTeam(client: AuditedClient, name: string): Promise<Team> {
  const ownerId = requireActor(client)
  return client.transaction(async (tx) => {
    const { rows } = await tx.query<Team>(`insert into public.teams (name) values ($1) returning ${teamColumns}`, [name])
    const team = rows[0]!
    await tx.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'owner')`, [team.id, ownerId])
    await ensureWebhookSecret(tx, team.id)
    return team
  })
}

/** Changes the team's name, webhook URL, activity retention (`null` clears these two) and/or API log retention. */
export async function updateTeam(client: AuditedClient, changes: z.output<typeof UpdateTeamBody>): Promise<Team> {
  // the SSRF guard at save time (connect time checks again, DNS answers included)
  const problem = changes.webhook_url && await webhookUrlProblem(changes.webhook_url, webhookSettings().allowPrivateNetworks)
  if (problem) throw createError({ statusCode: 400, statusMessage: `webhook_url: ${problem}` })
  const { rows } = await client.query<Team>(
    `update public.teams
     set name = coalesce($2, name),
         webhook_url = case when $3::boolean then $4 else webhook_url end,
         activity_retention_days = case when $5::boolean then $6::integer else activity_retention_days end,
         api_log_retention_days = coalesce($7::integer, api_log_retention_days)
     where id = $1
     returning ${teamColumns}`,
    [requireTeam(client), changes.name ?? null, changes.webhook_url !== undefined, changes.webhook_url ?? null,
      changes.activity_retention_days !== undefined, changes.activity_retention_days ?? null, changes.api_log_retention_days ?? null],
  )
  if (!rows[0]) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  return rows[0]
}

const memberColumns = `m.user_id, p.name, p.email, m.role, m.created_at`

/** The team's members, owners first. */
export async function listMembers(client: AuditedClient): Promise<Member[]> {
  const { rows } = await client.read<Member>(
    `select ${memberColumns}
     from public.team_members m join public.profiles p on p.id = m.user_id
     where m.team_id = $1
     order by array_position(array['owner', 'admin', 'member'], m.role), p.name`,
    [requireTeam(client)],
  )
  return rows
}

const forbidden = (message: string) => createError({ statusCode: 403, statusMessage: message })

/**
 * Locks the team's memberships for the rest of the transaction and returns the actor's current role
 * (which must hold `permission`, unless `permission` is null), the target's role and the owner count,
 * so that concurrent changes see each other's result.
 */
async function lockMembership(tx: Queryable, client: AuditedClient, userId: string, permission: Permission | null) {
  const { rows } = await tx.query<{ user_id: string, role: Role }>(
    'select user_id, role from public.team_members where team_id = $1 order by user_id for update',
    [requireTeam(client)],
  )
  const actor = rows.find(row => row.user_id === client.context.actorId)
  if (!actor) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  if (permission && !can(actor.role, permission)) throw forbidden(`Your role (${actor.role}) does not allow ${permission}`)
  const target = rows.find(row => row.user_id === userId)
  if (!target) throw createError({ statusCode: 404, statusMessage: 'Member not found' })
  return { actorRole: actor.role, target, owners: rows.filter(row => row.role === 'owner').length }
}

/** Changes a member's role: an admin may not change an owner nor grant owner; a team keeps at least one owner. */
export async function updateMemberRole(client: AuditedClient, userId: string, role: Role): Promise<Member> {
  const teamId = requireTeam(client)
  return client.transaction(async (tx) => {
    const { actorRole, target, owners } = await lockMembership(tx, client, userId, 'members.update')
    if (actorRole !== 'owner' && role === 'owner') throw forbidden('Only an owner can grant the owner role')
    if (target.role === 'owner' && actorRole !== 'owner') throw forbidden('Only an owner can change an owner')
    if (target.role === 'owner' && role !== 'owner' && owners === 1) {
      throw createError({ statusCode: 409, statusMessage: 'The team must keep at least one owner' })
    }
    await tx.query('update public.team_members set role = $3 where team_id = $1 and user_id = $2', [teamId, userId, role])
    const { rows } = await tx.query<Member>(
      `select ${memberColumns} from public.team_members m join public.profiles p on p.id = m.user_id
       where m.team_id = $1 and m.user_id = $2`,
      [teamId, userId],
    )
    return rows[0]!
  })
}

/** Removes a member: anyone may leave, removing someone else needs members.remove; an admin may not remove an owner; the last owner cannot leave. */
export async function removeMember(client: AuditedClient, userId: string): Promise<void> {
  const teamId = requireTeam(client)
  const isSelf = client.context.actorId === userId
  await client.transaction(async (tx) => {
    const { actorRole, target, owners } = await lockMembership(tx, client, userId, isSelf ? null : 'members.remove')
    if (target.role === 'owner' && actorRole !== 'owner' && !isSelf) throw forbidden('Only an owner can remove an owner')
    if (target.role === 'owner' && owners === 1) {
      throw createError({ statusCode: 409, statusMessage: 'The last owner cannot leave the team' })
    }
    await tx.query('delete from public.team_members where team_id = $1 and user_id = $2', [teamId, userId])
  })
}
