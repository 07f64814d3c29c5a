export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'update')
  return answerTableRequest(event, 'updateOne', client, table, {})
})
