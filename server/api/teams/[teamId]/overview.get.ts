export default defineEventHandler(async (event) => {
  const { client, team, role } = await authUser(event, null)
  return teamOverview(client, team.id, role)
})
