import { UpdateWebhookEndpointBody } from '#shared/utils/schemas'

export default defineEventHandler(async (event) => {
  const { client, team, user } = await authUser(event, 'webhooks.manage')
  const endpointId = requireIdParam(event, 'id', 'Webhook endpoint')
  const body = await readValidBody(event, UpdateWebhookEndpointBody)
  return updateWebhookEndpoint(client, team.id, endpointId, body, user.name)
})
