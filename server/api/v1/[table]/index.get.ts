export default definePublicApiHandler(async (event) => {
  const { client } = await authApiKey(event)
  const table = await requireDomainTable(event)
  const page = readValidQuery(event, PageQuery)
  return listRecords(client, table, page)
})
