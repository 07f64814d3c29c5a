export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'api_keys.view')
  return listApiKeys(client, team.id)
})
