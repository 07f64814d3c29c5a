export default definePublicApiHandler(async (event) => {
  const { client, table, apiKey } = await authApiTable(event, 'write')
  return idempotent(event, apiKey.id, async () => {
    const body = await readJsonBody(event, { allowArray: true })
    setResponseStatus(event, 201)
    if (!Array.isArray(body)) return createRecord(client, table, body)
    if (body.length < 1 || body.length > maxBulkRecords) throw createError({ statusCode: 400, statusMessage: `The array must hold 1 to ${maxBulkRecords} records` })
    return createRecords(client, table, body)
  })
})
