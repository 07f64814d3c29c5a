export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.manage')
  const endpointId = requireIdParam(event, 'id', 'Webhook endpoint')
  await deleteWebhookEndpoint(client, team.id, endpointId)
  setResponseStatus(event, 204)
  return null
})
