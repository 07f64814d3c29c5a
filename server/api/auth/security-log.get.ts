import { SecurityLogQuery } from '#shared/utils/security'
import { listSecurityLog } from '~~/server/utils/accounts/security-log'
import { requireSession } from '~~/server/utils/accounts/session-state'

export default defineEventHandler(async (event) => {
  const { user } = await requireSession(event)
  const { limit, cursor } = readValidQuery(event, SecurityLogQuery)
  return listSecurityLog(await useDb(), user.id, limit, cursor ?? null)
})
