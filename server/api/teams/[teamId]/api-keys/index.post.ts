import { requireSudo } from '~~/server/utils/accounts/sudo'

export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'api_keys.create')
  await requireSudo(event)
  const input = await readValidBody(event, CreateApiKeyBody)
  const apiKey = await createApiKey(client, team.id, input)
  setResponseStatus(event, 201)
  return apiKey
})
