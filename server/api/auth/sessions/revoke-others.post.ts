import { endOtherSessions } from '~~/server/utils/accounts/session-list'
import { requireSudo } from '~~/server/utils/accounts/sudo'

export default defineEventHandler(async (event) => {
  const state = await requireSudo(event)
  return { ended: await endOtherSessions(await useDb(), event, state) }
})
