export default definePublicApiHandler(async (event) => {
  const { client } = await authApiKey(event)
  const table = await requireDomainTable(event)
  const id = requireRecordId(event, table)
  await deleteRecordIfMatch(event, client, table, id)
  setResponseStatus(event, 204)
  return null
})
