import { requireSudo } from '~~/server/utils/accounts/sudo'

export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'api_keys.create')
  await requireSudo(event)
  const keyId = requireIdParam(event, 'keyId', 'API key')
  const input = await readValidBody(event, UpdateApiKeyBody)
  return updateApiKey(client, team.id, keyId, input)
})
