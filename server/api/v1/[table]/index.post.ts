export default definePublicApiHandler(async (event) => {
  const { client } = await authApiKey(event)
  const table = await requireDomainTable(event)
  const body = await readValidBody(event, RecordBody)
  const record = await createRecord(client, table, body)
  setResponseStatus(event, 201)
  return record
})
