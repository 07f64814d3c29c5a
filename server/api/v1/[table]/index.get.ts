export default definePublicApiHandler(async (event) => {
  const { client, table } = await authApiTable(event, 'read')
  return answerRecordList(event, client, table)
})
