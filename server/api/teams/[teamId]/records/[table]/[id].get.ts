export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'view')
  const id = requireRecordId(event, table)
  return answerRecord(event, await getRecord(client, table, id))
})
