export default defineEventHandler(async (event) => {
  const { role } = await authUser(event, null)
  return listDataTables(role)
})
