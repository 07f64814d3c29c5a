export default definePublicApiHandler(async (event) => {
  const { client, table, apiKey } = await authApiTable(event, 'write')
  const id = requireRecordId(event, table)
  return idempotent(event, apiKey.id, async () => {
    await deleteRecordIfMatch(event, client, table, id)
    setResponseStatus(event, 204)
    return null
  })
})
