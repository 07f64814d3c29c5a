import { ApiUsageQuery } from '#shared/utils/api-log'
import { apiUsage } from '~~/server/utils/api-log/queries'

export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'api_keys.view')
  return apiUsage(client, readValidQuery(event, ApiUsageQuery))
})
