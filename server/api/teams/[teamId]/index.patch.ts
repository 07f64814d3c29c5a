export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'team.update')
  const changes = await readValidBody(event, UpdateTeamBody)
  return updateTeam(client, changes)
})
