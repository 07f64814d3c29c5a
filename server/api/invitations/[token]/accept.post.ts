export default defineEventHandler(async (event) => {
  const { user, client } = await authSignedIn(event)
  const token = getRouterParam(event, 'token') ?? ''
  const membership = await acceptInvitation(client, token)
  // the team just joined becomes the current one
  await setUserSession(event, { user, currentTeamId: membership.team_id })
  return membership
})
