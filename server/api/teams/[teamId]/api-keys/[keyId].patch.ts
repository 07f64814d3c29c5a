export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'api_keys.revoke')
  const keyId = requireIdParam(event, 'keyId', 'API key')
  return revokeApiKey(client, team.id, keyId)
})
