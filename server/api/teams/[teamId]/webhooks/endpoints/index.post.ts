import { CreateWebhookEndpointBody } from '#shared/utils/schemas'

export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'webhooks.manage')
  const body = await readValidBody(event, CreateWebhookEndpointBody)
  const endpoint = await createWebhookEndpoint(client, team.id, body)
  setResponseStatus(event, 201)
  return endpoint
})
