import { requireSudo } from '~~/server/utils/accounts/sudo'

export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'api_keys.create')
  await requireSudo(event)
  const keyId = requireIdParam(event, 'keyId', 'API key')
  const { expires_in_seconds } = await readValidBody(event, RollApiKeyBody, { optional: true })
  const apiKey = await rollApiKey(client, team.id, keyId, expires_in_seconds)
  setResponseStatus(event, 201)
  return apiKey
})
