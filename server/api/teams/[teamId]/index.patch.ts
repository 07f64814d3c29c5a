import { requireSudo } from '~~/server/utils/accounts/sudo'

export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'team.update')
  const changes = await readValidBody(event, UpdateTeamBody)
  // where the team's events go is a powerful setting
  if (changes.webhook_url !== undefined) await requireSudo(event)
  return updateTeam(client, changes)
})
