import { can } from '#shared/permissions'
import { revokeGrant } from '~~/server/utils/oauth/grants'

// DELETE /api/teams/{teamId}/grants/{id}: revokes a connection (one's own, or any with api_keys.revoke).
export default defineEventHandler(async (event) => {
  const { client, team, user, role } = await authUser(event, null)
  const grantId = requireIdParam(event, 'id', 'Connection')
  return revokeGrant(client, team.id, grantId, user.id, can(role, 'api_keys.revoke'))
})
