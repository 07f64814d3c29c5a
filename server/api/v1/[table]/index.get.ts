export default definePublicApiHandler(async (event) => {
  const { client, table, apiKey } = await authApiTable(event, 'read')
  return answerRecordList(event, client, table, keyAccess(apiKey))
})
