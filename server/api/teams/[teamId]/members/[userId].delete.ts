export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, null)
  await removeMember(client, requireIdParam(event, 'userId', 'Member'))
  setResponseStatus(event, 204)
  return null
})
