export default defineEventHandler(async (event) => {
  const user = await requireUser(event)
  const { team_id } = await readValidBody(event, CurrentTeamBody)
  const teams = await listUserTeams(await useDb(), user.id)
  if (!teams.some(team => team.id === team_id)) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
  await setUserSession(event, { user, currentTeamId: team_id })
  return { current_team_id: team_id }
})
