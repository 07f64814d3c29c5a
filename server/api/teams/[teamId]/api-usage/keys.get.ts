import { keyRequestsLastDay } from '~~/server/utils/api-log/queries'

// Each key's requests over the last 24 hours, for the key list.
export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'api_keys.view')
  return keyRequestsLastDay(client)
})
