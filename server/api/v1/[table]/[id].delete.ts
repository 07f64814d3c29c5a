export default definePublicApiHandler(async (event) => {
  const { client, table } = await authApiTable(event, 'write')
  const id = requireRecordId(event, table)
  await deleteRecordIfMatch(event, client, table, id)
  setResponseStatus(event, 204)
  return null
})
