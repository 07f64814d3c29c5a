export default definePublicApiHandler(async (event) => {
  const { client } = await authApiKey(event)
  const table = await requireDomainTable(event)
  const id = requireRecordId(event, table)
  return answerRecord(event, await getRecord(client, table, id))
})
