import { CreateWebhookEndpointBody } from '#shared/utils/schemas'

export default definePublicApiHandler(async (event) => {
  const { client, apiKey } = await authApiWebhooks(event, 'write')
  const body = await readValidBody(event, CreateWebhookEndpointBody)
  const endpoint = await subscribeWebhookEndpoint(client, apiKey, body)
  setResponseStatus(event, 201)
  return endpoint
})
