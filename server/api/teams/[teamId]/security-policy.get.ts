import { getSecurityPolicy } from '~~/server/utils/accounts/team-policy'

// GET /api/teams/{teamId}/security-policy: any member, also one the policy refuses (to see why);
// who does not comply, and since when, for owners and admins.
export default defineEventHandler(async (event) => {
  const { client, role } = await authUser(event, null, { twoFactorExempt: true })
  return getSecurityPolicy(client, role)
})
