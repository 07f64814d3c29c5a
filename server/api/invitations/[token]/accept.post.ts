export default defineEventHandler(async (event) => {
  const user = await requireUser(event)
  const token = getRouterParam(event, 'token') ?? ''
  const membership = await acceptInvitation(await useDb(), user, token)
  // the team just joined becomes the current one
  await setUserSession(event, { user, currentTeamId: membership.team_id })
  return membership
})
