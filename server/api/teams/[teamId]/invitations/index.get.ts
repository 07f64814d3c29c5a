export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'invitations.view')
  return listPendingInvitations(client, team.id, inviteBaseUrl(event))
})
