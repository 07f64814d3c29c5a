export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'members.update')
  const userId = requireIdParam(event, 'userId', 'Member')
  const { role } = await readValidBody(event, MemberRoleBody)
  return updateMemberRole(client, userId, role)
})
