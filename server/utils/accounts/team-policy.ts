import type { z } from 'zod'
import type { Role } from '#shared/permissions'
import type { SecurityPolicy, SecurityPolicyBody, NonCompliantMember } from '#shared/utils/security-policy'
import { requireActor, requireTeam, type AuditedClient } from '../audited-client'
import { forgetPrincipalsOf } from '../credentials/principal'

/**
 * A team's two-factor policy: who must have a second factor (off, admins, everyone) and from when.
 * It is enforced by the credential pipeline (server/utils/credentials/principal.ts) for keys and
 * grants, and by the session routes' membership check; this module reads and changes it.
 */

const policyColumns = `require_two_factor, two_factor_grace_days as grace_days, two_factor_enforced_from as enforced_from`

/** The members the policy covers who have no verified factor, with when the policy refuses (or began to refuse) each. */
async function nonCompliantMembers(client: AuditedClient): Promise<NonCompliantMember[]> {
  const { rows } = await client.read<NonCompliantMember>(
    `select m.user_id, p.name, m.role,
       greatest(coalesce(t.two_factor_enforced_from, '-infinity'), m.created_at) as since
     from public.teams t
     join public.team_members m on m.team_id = t.id
     join public.profiles p on p.id = m.user_id
     where t.id = $1
       and (t.require_two_factor = 'everyone' or (t.require_two_factor = 'admins' and m.role in ('owner', 'admin')))
       and not exists (select 1 from public.auth_factors f where f.user_id = m.user_id and f.verified_at is not null)
     order by array_position(array['owner', 'admin', 'member'], m.role), p.name`,
    [requireTeam(client)],
  )
  return rows
}

/** The team's policy; `non_compliant` for a caller of role owner or admin. */
export async function getSecurityPolicy(client: AuditedClient, role: Role): Promise<SecurityPolicy> {
  const { rows } = await client.read<SecurityPolicy>(`select ${policyColumns} from public.teams where id = $1`, [requireTeam(client)])
  const policy = rows[0]
  if (!policy) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  if (role !== 'owner' && role !== 'admin') return policy
  return { ...policy, non_compliant: await nonCompliantMembers(client) }
}

/**
 * Changes the team's policy (the caller is an owner: the route checks it). Turning it on needs a
 * verified factor of the owner's own (409 owner_needs_two_factor). A change of who is covered or of
 * the grace period starts it again: enforced_from = now + grace_days; off clears it. The change is
 * in the activity log (the audited client), and every instance forgets the team's principals (the
 * teams trigger notifies; this one forgets them before it answers).
 */
export async function updateSecurityPolicy(client: AuditedClient, input: z.output<typeof SecurityPolicyBody>): Promise<SecurityPolicy> {
  const teamId = requireTeam(client)
  const actorId = requireActor(client)
  await client.transaction(async (tx) => {
    const { rows } = await tx.query<{ require_two_factor: string, grace_days: number, has_factor: boolean }>(
      `select t.require_two_factor, t.two_factor_grace_days as grace_days,
         exists (select 1 from public.auth_factors f where f.user_id = $2 and f.verified_at is not null) as has_factor
       from public.teams t where t.id = $1 for update`,
      [teamId, actorId],
    )
    const current = rows[0]
    if (!current) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
    if (input.require_two_factor !== 'off' && !current.has_factor) {
      throw createError({ statusCode: 409, statusMessage: 'Set up a second factor (an authenticator app or a passkey) on your own account before you require one of the team', data: { code: 'owner_needs_two_factor' } })
    }
    const graceDays = input.grace_days ?? current.grace_days
    if (input.require_two_factor === current.require_two_factor && graceDays === current.grace_days) return
    await tx.query(
      `update public.teams
       set require_two_factor = $2::text,
           two_factor_grace_days = $3::int,
           two_factor_enforced_from = case when $2::text = 'off' then null else now() + make_interval(days => $3::int) end
       where id = $1`,
      [teamId, input.require_two_factor, graceDays],
    )
  })
  // committed: this instance forgets the team's principals before it answers (the others on notification)
  forgetPrincipalsOf(`team:${teamId}`)
  return getSecurityPolicy(client, 'owner')
}
