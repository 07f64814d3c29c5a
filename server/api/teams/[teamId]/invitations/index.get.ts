export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'invitations.view')
  return listPendingInvitations(client, inviteBaseUrl(event))
})
