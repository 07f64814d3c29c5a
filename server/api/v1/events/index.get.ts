import { FeedQuery, listKeyEvents } from '~~/server/utils/changes/key-feed'

export default definePublicApiHandler(async (event) => {
  const { apiKey } = await authApiKey(event)
  const query = readValidQuery(event, FeedQuery)
  return listKeyEvents(event, apiKey, query)
})
