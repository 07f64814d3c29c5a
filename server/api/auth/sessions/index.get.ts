import { listSessions } from '~~/server/utils/accounts/session-list'
import { requireSession } from '~~/server/utils/accounts/session-state'

export default defineEventHandler(async (event) => {
  return listSessions(await useDb(), await requireSession(event))
})
