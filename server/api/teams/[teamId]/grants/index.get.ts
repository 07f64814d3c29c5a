import { can } from '#shared/permissions'
import { listGrants } from '~~/server/utils/oauth/grants'

// GET /api/teams/{teamId}/grants: the agents connected by OAuth; one's own, or all for owners and admins.
export default defineEventHandler(async (event) => {
  const { client, team, user, role } = await authUser(event, null)
  return listGrants(client, team.id, user.id, can(role, 'api_keys.view'))
})
