export default definePublicApiHandler(async (event) => {
  const { client, table, apiKey } = await authApiTable(event, 'write')
  return idempotent(event, apiKey.id, () => answerCreate(event, client, table, keyAccess(apiKey)))
})
