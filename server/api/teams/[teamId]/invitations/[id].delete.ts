export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'invitations.revoke')
  const invitationId = requireIdParam(event, 'id', 'Invitation')
  await revokeInvitation(client, invitationId)
  setResponseStatus(event, 204)
  return null
})
