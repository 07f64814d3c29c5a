export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'update')
  const id = requireRecordId(event, table)
  const body = await readValidBody(event, RecordBody)
  return updateRecordIfMatch(event, client, table, id, body)
})
