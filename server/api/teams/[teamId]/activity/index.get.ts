export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'activity.view')
  const filters = readValidQuery(event, ActivityQuery)
  return listActivity(client, filters)
})
