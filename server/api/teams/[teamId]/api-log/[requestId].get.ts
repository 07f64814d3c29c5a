import { getApiLogEntry } from '~~/server/utils/api-log/queries'

export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'api_keys.view')
  return getApiLogEntry(client, getRouterParam(event, 'requestId') ?? '')
})
