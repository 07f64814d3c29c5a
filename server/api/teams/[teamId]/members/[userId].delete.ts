import { can } from '#shared/permissions'
import { requireSudo } from '~~/server/utils/accounts/sudo'

export default defineEventHandler(async (event) => {
  const userId = requireIdParam(event, 'userId', 'Member')
  const session = await getUserSession(event)
  // leaving the team stays open to a member the team's two-factor policy refuses
  const { client, user, role } = await authUser(event, null, { twoFactorExempt: userId === session.user?.id })
  // leaving is one's own business; removing someone else takes the permission, then sudo
  if (userId !== user.id) {
    if (!can(role, 'members.remove')) throw createError({ statusCode: 403, statusMessage: `Your role (${role}) does not allow members.remove` })
    await requireSudo(event)
  }
  await removeMember(client, userId)
  setResponseStatus(event, 204)
  return null
})
