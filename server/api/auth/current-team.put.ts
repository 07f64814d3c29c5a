export default defineEventHandler(async (event) => {
  const { user, client } = await authSignedIn(event)
  const { team_id } = await readValidBody(event, CurrentTeamBody)
  await requireUserTeam(client, team_id)
  await setUserSession(event, { user, currentTeamId: team_id })
  return { current_team_id: team_id }
})
