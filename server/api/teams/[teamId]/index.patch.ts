export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'team.update')
  const changes = await readValidBody(event, UpdateTeamBody)
  return updateTeam(client, team.id, changes)
})
