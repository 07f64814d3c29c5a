export default defineEventHandler(async (event) => {
  const { client, table } = await authTableAction(event, 'view')
  return answerTableRequest(event, 'list', client, table, {})
})
