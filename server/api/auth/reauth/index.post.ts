import { ReauthBody } from '#shared/utils/security'
import { logSecurityEvent } from '~~/server/utils/accounts/security-log'
import { requireSession } from '~~/server/utils/accounts/session-state'
import { proveSecondFactor } from '~~/server/utils/accounts/sign-in'
import { openSudo } from '~~/server/utils/accounts/sudo'

// Confirms who is there before powerful actions: the password (accounts without a factor) or a factor.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event)
  const body = await readValidBody(event, ReauthBody)
  const db = await useDb()
  let method: 'password' | 'totp' | 'passkey' | 'recovery_code'
  if ('password' in body) {
    if (state.hasFactor) throw createError({ statusCode: 400, statusMessage: 'Confirm with one of your factors, not the password', data: { code: 'factor_required' } })
    const retryAfter = await claimLoginAttempt(db, state.user.email)
    if (retryAfter) {
      setResponseHeader(event, 'retry-after', retryAfter)
      throw createError({ statusCode: 429, statusMessage: `Too many wrong passwords; try again in ${Math.ceil(retryAfter / 60)} minute(s)`, data: { code: 'rate_limited' } })
    }
    if (!await verifyCredentials(db, state.user.email, body.password)) throw createError({ statusCode: 401, statusMessage: 'password: is wrong', data: { code: 'invalid_password' } })
    method = 'password'
  }
  else {
    method = await proveSecondFactor(event, db, state, body, 'reauth', { recoveryCodes: false, logFailures: false })
  }
  const sudoUntil = await openSudo(db, state.sessionId)
  await logSecurityEvent(db, event, state.user.id, 'reauth', method)
  return { sudo_until: sudoUntil }
})
