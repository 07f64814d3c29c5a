import { ApiLogQuery } from '#shared/utils/api-log'
import { listApiLog } from '~~/server/utils/api-log/queries'

export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'api_keys.view')
  return listApiLog(client, readValidQuery(event, ApiLogQuery))
})
