import { authenticationOptions } from '~~/server/utils/accounts/passkeys'
import { isPending, requireSession } from '~~/server/utils/accounts/session-state'

// Options for the second step with a passkey: the account's passkeys, the challenge bound to this session.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event, { pending: 'allow' })
  if (!isPending(state)) throw createError({ statusCode: 409, statusMessage: 'This session needs no second factor', data: { code: 'mfa_not_required' } })
  return authenticationOptions(event, await useDb(), 'second_factor', { sessionId: state.sessionId }, state.user.id)
})
