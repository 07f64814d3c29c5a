export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'invitations.create')
  const body = await readValidBody(event, CreateInvitationBody)
  const invitation = await createInvitation(client, team, body, inviteBaseUrl(event))
  setResponseStatus(event, 201)
  return invitation
})
