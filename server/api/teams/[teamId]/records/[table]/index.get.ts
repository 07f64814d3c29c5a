export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'view')
  return answerRecordList(event, client, table)
})
