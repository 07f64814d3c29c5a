export default definePublicApiHandler(async (event) => {
  const { client, table, apiKey } = await authApiTable(event, 'write')
  return idempotent(event, apiKey.id, () => answerFilteredWrite(event, client, table, keyAccess(apiKey)))
})
