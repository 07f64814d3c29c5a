export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.view')
  return listWebhookEndpoints(client, team.id)
})
