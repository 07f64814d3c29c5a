import { Readable } from 'node:stream'

export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'activity.view')
  const query = readValidQuery(event, ActivityExportQuery)
  const day = new Date().toISOString().slice(0, 10)
  setResponseHeaders(event, {
    'content-type': query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    'content-disposition': `attachment; filename="activity-${day}.${query.format}"`,
    'cache-control': 'no-store',
  })
  return sendStream(event, Readable.from(exportActivity(client, query), { highWaterMark: 1 }))
})
