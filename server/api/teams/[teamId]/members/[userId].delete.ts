export default defineEventHandler(async (event) => {
  const user = await requireUser(event)
  const userId = requireIdParam(event, 'userId', 'Member')
  // a member may always leave; removing someone else needs members.remove
  const { client, team } = await authUser(event, user.id === userId ? null : 'members.remove')
  await removeMember(client, { teamId: team.id, userId })
  setResponseStatus(event, 204)
  return null
})
