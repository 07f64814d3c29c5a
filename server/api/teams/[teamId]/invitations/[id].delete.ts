export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'invitations.revoke')
  const invitationId = requireIdParam(event, 'id', 'Invitation')
  await revokeInvitation(client, team.id, invitationId)
  setResponseStatus(event, 204)
  return null
})
