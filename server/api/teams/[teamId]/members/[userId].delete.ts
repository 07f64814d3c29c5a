export default defineEventHandler(async (event) => {
  const userId = requireIdParam(event, 'userId', 'Member')
  const session = await getUserSession(event)
  // leaving the team stays open to a member the team's two-factor policy refuses
  const { client } = await authUser(event, null, { twoFactorExempt: userId === session.user?.id })
  await removeMember(client, userId)
  setResponseStatus(event, 204)
  return null
})
