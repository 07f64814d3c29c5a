import { VerifyTotpBody } from '#shared/utils/security'
import { confirmTotpEnrolment, recordSecondFactorFailure } from '~~/server/utils/accounts/factors'
import { factorAdded, refuseWhileThrottled } from '~~/server/utils/accounts/sign-in'
import { requireSession } from '~~/server/utils/accounts/session-state'
import { requireSudo } from '~~/server/utils/accounts/sudo'

// Confirms an enrolment with the app's first code; the account's first factor also answers its recovery codes.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event)
  const factorId = requireIdParam(event, 'id', 'Factor')
  const { code } = await readValidBody(event, VerifyTotpBody)
  if (state.hasFactor) await requireSudo(event)
  const db = await useDb()
  await refuseWhileThrottled(event, db, state.user.id)
  const factor = await confirmTotpEnrolment(db, state.user.id, factorId, code).catch(async (error) => {
    if (error?.data?.code === 'invalid_code') await recordSecondFactorFailure(db, state.user.id)
    throw error
  })
  return { factor, ...await factorAdded(event, db, state, 'totp') }
})
