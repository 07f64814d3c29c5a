export default defineEventHandler(async (event) => {
  const { team } = await authUser(event, null)
  return team
})
