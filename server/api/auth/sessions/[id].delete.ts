import { endSession } from '~~/server/utils/accounts/session-list'
import { requireSession } from '~~/server/utils/accounts/session-state'
import { requireSudo } from '~~/server/utils/accounts/sudo'

// Ends one session of the account: its own is a sign-out; another one needs sudo.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event)
  const sessionId = requireIdParam(event, 'id', 'Session')
  if (sessionId !== state.sessionId) await requireSudo(event)
  await endSession(await useDb(), event, state, sessionId)
  if (sessionId === state.sessionId) await clearUserSession(event)
  setResponseStatus(event, 204)
  return null
})
