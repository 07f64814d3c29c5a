export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'api_keys.create')
  const input = await readValidBody(event, CreateApiKeyBody)
  const apiKey = await createApiKey(client, team.id, input)
  setResponseStatus(event, 201)
  return apiKey
})
