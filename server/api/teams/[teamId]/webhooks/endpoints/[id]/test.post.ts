export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.manage')
  const endpointId = requireIdParam(event, 'id', 'Webhook endpoint')
  const id = await queueEndpointTest(client, team, endpointId)
  setResponseStatus(event, 202)
  return { id }
})
