export default defineEventHandler(async (event) => {
  const { client, team } = await authUser(event, 'members.update')
  const userId = requireIdParam(event, 'userId', 'Member')
  const { role } = await readValidBody(event, MemberRoleBody)
  return updateMemberRole(client, { teamId: team.id, userId, role })
})
