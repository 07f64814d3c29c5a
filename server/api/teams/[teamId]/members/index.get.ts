export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'members.view')
  return listMembers(client, team.id)
})
