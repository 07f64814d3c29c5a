export default definePublicApiHandler(async (event) => {
  const { client, table } = await authApiTable(event, 'write')
  const id = requireRecordId(event, table)
  const body = await readValidBody(event, RecordBody)
  return updateRecordIfMatch(event, client, table, id, body)
})
