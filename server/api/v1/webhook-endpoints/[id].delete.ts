export default definePublicApiHandler(async (event) => {
  const { client, teamId } = await authApiWebhooks(event, 'write')
  const endpointId = requireIdParam(event, 'id', 'Webhook endpoint')
  await deleteWebhookEndpoint(client, teamId, endpointId)
  setResponseStatus(event, 204)
  return null
})
