export default defineEventHandler(async (event) => {
  const { user, client } = await authSignedIn(event)
  const { name } = await readValidBody(event, CreateTeamBody)
  const team = await createTeam(client, name)
  await setUserSession(event, { user, currentTeamId: team.id })
  setResponseStatus(event, 201)
  return team
})
