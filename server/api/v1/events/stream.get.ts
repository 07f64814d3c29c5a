import { FeedQuery, streamKeyEvents } from '~~/server/utils/changes/key-feed'

export default definePublicApiHandler(async (event) => {
  const { apiKey } = await authApiKey(event)
  // the stream writes its head before the handler returns
  await settleRateLimit(event)
  const query = readValidQuery(event, FeedQuery)
  await streamKeyEvents(event, apiKey, query)
})
