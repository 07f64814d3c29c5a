export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'delete')
  const id = requireRecordId(event, table)
  await deleteRecordIfMatch(event, client, table, id)
  setResponseStatus(event, 204)
  return null
})
