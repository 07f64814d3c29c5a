import { NewTotpBody } from '#shared/utils/security'
import { startTotpEnrolment } from '~~/server/utils/accounts/factors'
import { requireSession } from '~~/server/utils/accounts/session-state'
import { requireSudo } from '~~/server/utils/accounts/sudo'

// Starts an authenticator-app enrolment; the secret is shown in this answer only.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event)
  // the account's first factor needs no sudo; any further one does
  if (state.hasFactor) await requireSudo(event)
  const { name } = await readValidBody(event, NewTotpBody, { optional: true })
  const enrolment = await startTotpEnrolment(await useDb(), state.user, name)
  setResponseStatus(event, 201)
  return enrolment
})
