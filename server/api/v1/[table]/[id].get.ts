export default definePublicApiHandler(async (event) => {
  const { client } = await authApiKey(event)
  const table = await requireDomainTable(event)
  const id = requireRecordId(event, table)
  return getRecord(client, table, id)
})
