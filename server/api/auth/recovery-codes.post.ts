import { replaceRecoveryCodes } from '~~/server/utils/accounts/recovery-codes'
import { logSecurityEvent } from '~~/server/utils/accounts/security-log'
import { requireSession } from '~~/server/utils/accounts/session-state'
import { requireSudo } from '~~/server/utils/accounts/sudo'

// A new set of 10 recovery codes (shown once); the old set stops working.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event)
  if (!state.hasFactor) throw createError({ statusCode: 409, statusMessage: 'Add a second factor first: recovery codes stand in for one', data: { code: 'no_factor' } })
  await requireSudo(event)
  const db = await useDb()
  const recoveryCodes = await db.transaction(tx => replaceRecoveryCodes(tx, state.user.id))
  await logSecurityEvent(db, event, state.user.id, 'recovery_codes_created')
  return { recovery_codes: recoveryCodes }
})
