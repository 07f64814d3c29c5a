export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.view')
  const endpointId = requireIdParam(event, 'id', 'Webhook endpoint')
  return listWebhookDeliveries(client, team.id, endpointId)
})
