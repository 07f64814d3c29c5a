export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.manage')
  const deliveryId = requireIdParam(event, 'id', 'Delivery')
  await resendWebhookDelivery(client, team.id, deliveryId)
  setResponseStatus(event, 202)
  return { id: deliveryId }
})
