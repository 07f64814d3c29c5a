import { requireSudo } from '~~/server/utils/accounts/sudo'

export default defineEventHandler(async (event) => {
  const { client } = await authUser(event, 'members.update')
  await requireSudo(event)
  const userId = requireIdParam(event, 'userId', 'Member')
  const { role } = await readValidBody(event, MemberRoleBody)
  return updateMemberRole(client, userId, role)
})
