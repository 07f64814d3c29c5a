import type { Me } from '#shared/types/api'

export default defineEventHandler(async (event): Promise<Me> => {
  const user = await requireUser(event)
  const session = await getUserSession(event)
  const teams = await listUserTeams(await useDb(), user.id)
  const current = teams.find(team => team.id === session.currentTeamId) ?? teams[0]
  return { user, teams, current_team_id: current?.id ?? null }
})
