export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'invitations.create')
  const body = await readValidBody(event, CreateInvitationBody)
  const invitation = await createInvitation(client, body, inviteBaseUrl(event))
  setResponseStatus(event, 201)
  return invitation
})
