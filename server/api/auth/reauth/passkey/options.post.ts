import { authenticationOptions } from '~~/server/utils/accounts/passkeys'
import { requireSession } from '~~/server/utils/accounts/session-state'

// Options for re-authenticating with a passkey; the challenge is bound to this session.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event)
  return authenticationOptions(event, await useDb(), 'reauth', { sessionId: state.sessionId }, state.user.id)
})
