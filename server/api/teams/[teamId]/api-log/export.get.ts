import { Readable } from 'node:stream'
import { ApiLogExportQuery } from '#shared/utils/api-log'
import { exportApiLog } from '~~/server/utils/api-log/queries'

export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'api_keys.view')
  const query = readValidQuery(event, ApiLogExportQuery)
  const day = new Date().toISOString().slice(0, 10)
  setResponseHeaders(event, {
    'content-type': query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    'content-disposition': `attachment; filename="api-log-${day}.${query.format}"`,
    'cache-control': 'no-store',
  })
  return sendStream(event, Readable.from(exportApiLog(client, query), { highWaterMark: 1 }))
})
