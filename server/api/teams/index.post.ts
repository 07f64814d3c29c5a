export default defineEventHandler(async (event) => {
  const user = await requireUser(event)
  const { name } = await readValidBody(event, CreateTeamBody)
  const team = await createTeam(await useDb(), user, name)
  await setUserSession(event, { user, currentTeamId: team.id })
  setResponseStatus(event, 201)
  return team
})
