import { registrationOptions } from '~~/server/utils/accounts/passkeys'
import { requireSession } from '~~/server/utils/accounts/session-state'
import { requireSudo } from '~~/server/utils/accounts/sudo'

// Options for navigator.credentials.create(); the challenge is kept on the server for this session.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event)
  if (state.hasFactor) await requireSudo(event)
  return registrationOptions(event, await useDb(), state.user, state.sessionId)
})
