export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'activity.view')
  const filters = readValidQuery(event, ActivityQuery)
  return listActivity(client, team.id, filters)
})
