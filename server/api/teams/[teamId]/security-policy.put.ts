import { SecurityPolicyBody } from '#shared/utils/security-policy'
import { updateSecurityPolicy } from '~~/server/utils/accounts/team-policy'

// PUT /api/teams/{teamId}/security-policy: the owner only, who must have a second factor to turn it on.
export default defineEventHandler(async (event) => {
  const { client, role } = await authUser(event, null)
  if (role !== 'owner') throw createError({ statusCode: 403, statusMessage: `Your role (${role}) does not allow changing the team's security policy; only an owner may` })
  const input = await readValidBody(event, SecurityPolicyBody)
  return updateSecurityPolicy(client, input)
})
