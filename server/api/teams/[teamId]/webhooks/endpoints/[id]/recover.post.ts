import { RecoverWebhookEndpointBody } from '#shared/utils/schemas'

export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.manage')
  const endpointId = requireIdParam(event, 'id', 'Webhook endpoint')
  const { since } = await readValidBody(event, RecoverWebhookEndpointBody)
  const queued = await recoverWebhookEndpoint(client, team.id, endpointId, since)
  setResponseStatus(event, 202)
  return { queued }
})
