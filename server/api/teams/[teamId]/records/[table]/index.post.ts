export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'create')
  const body = await readValidBody(event, RecordBody)
  const record = await createRecord(client, table, body)
  setResponseStatus(event, 201)
  setResponseHeader(event, 'etag', recordEtag(record))
  return record
})
