import { UpdateWebhookEndpointBody } from '#shared/utils/schemas'

export default definePublicApiHandler(async (event) => {
  const { client, apiKey, teamId } = await authApiWebhooks(event, 'write')
  const endpointId = requireIdParam(event, 'id', 'Webhook endpoint')
  const body = await readValidBody(event, UpdateWebhookEndpointBody)
  return updateWebhookEndpoint(client, teamId, endpointId, body, await apiKeyActorName(client, apiKey))
})
