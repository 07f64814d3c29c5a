export default definePublicApiHandler(async (event) => {
  const { client, table } = await authApiTable(event, 'read')
  const id = requireRecordId(event, table)
  return answerRecord(event, await getRecord(client, table, id))
})
