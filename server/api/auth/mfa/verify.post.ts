import { SecondFactorBody } from '#shared/utils/security'
import { logSecurityEvent } from '~~/server/utils/accounts/security-log'
import { isPending, requireSession } from '~~/server/utils/accounts/session-state'
import { proveSecondFactor, raiseSession } from '~~/server/utils/accounts/sign-in'

// The second step of a sign-in: a code, a recovery code or a passkey raises the session to level 2 under a new id.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event, { pending: 'allow' })
  const body = await readValidBody(event, SecondFactorBody)
  if (!isPending(state)) throw createError({ statusCode: 409, statusMessage: 'This session needs no second factor', data: { code: 'mfa_not_required' } })
  const db = await useDb()
  const method = await proveSecondFactor(event, db, state, body, 'second_factor', { recoveryCodes: true, logFailures: true })
  await raiseSession(event, db, state, method, true)
  if (method === 'recovery_code') await logSecurityEvent(db, event, state.user.id, 'recovery_code_used', 'recovery_code')
  await logSecurityEvent(db, event, state.user.id, 'sign_in', method)
  return { user: state.user }
})
