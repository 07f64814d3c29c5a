export default definePublicApiHandler(async (event) => {
  const { client, table, apiKey } = await authApiTable(event, 'write')
  const id = requireRecordId(event, table)
  return idempotent(event, apiKey.id, async () =>
    updateRecordIfMatch(event, client, table, id, await readValidBody(event, RecordBody)))
})
