export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'delete')
  return answerTableRequest(event, 'deleteOne', client, table, {})
})
