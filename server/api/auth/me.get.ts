import type { Me } from '#shared/types/api'

export default defineEventHandler(async (event): Promise<Me> => {
  const { user, client } = await authSignedIn(event)
  const session = await getUserSession(event)
  const { teams, current } = await userTeams(client, session.currentTeamId)
  return { user, teams, current_team_id: current?.id ?? null }
})
