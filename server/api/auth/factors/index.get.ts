import { listFactors } from '~~/server/utils/accounts/factors'
import { requireSession } from '~~/server/utils/accounts/session-state'

export default defineEventHandler(async (event) => {
  const { user } = await requireSession(event)
  return listFactors(await useDb(), user.id)
})
