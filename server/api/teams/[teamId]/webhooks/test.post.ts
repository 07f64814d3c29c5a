export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.manage')
  const id = await queueTestWebhook(client, team)
  setResponseStatus(event, 202)
  return { id }
})
