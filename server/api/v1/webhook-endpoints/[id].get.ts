export default definePublicApiHandler(async (event) => {
  const { client, teamId } = await authApiWebhooks(event, 'read')
  const endpointId = requireIdParam(event, 'id', 'Webhook endpoint')
  return getWebhookEndpoint(client, teamId, endpointId)
})
