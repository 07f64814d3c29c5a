export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.manage')
  return { secret: await rotateWebhookSecret(client, team.id) }
})
