export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'members.view')
  return listMembers(client)
})
