export default definePublicApiHandler(async (event) => {
  const { client } = await authApiKey(event)
  const table = await requireDomainTable(event)
  return answerRecordList(event, client, table)
})
