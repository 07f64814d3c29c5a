export default definePublicApiHandler(async (event) => {
  const { client } = await authApiKey(event)
  const table = await requireDomainTable(event)
  const id = requireRecordId(event, table)
  const body = await readValidBody(event, RecordBody)
  return updateRecordIfMatch(event, client, table, id, body)
})
