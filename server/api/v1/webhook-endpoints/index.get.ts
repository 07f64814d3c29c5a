export default definePublicApiHandler(async (event) => {
  const { client, teamId } = await authApiWebhooks(event, 'read')
  return listWebhookEndpoints(client, teamId)
})
