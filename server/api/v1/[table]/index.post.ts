export default definePublicApiHandler(async (event) => {
  const { client, table } = await authApiTable(event, 'write')
  const body = await readValidBody(event, RecordBody)
  const record = await createRecord(client, table, body)
  setResponseStatus(event, 201)
  return record
})
