import { NewPasskeyBody } from '#shared/utils/security'
import { addPasskey } from '~~/server/utils/accounts/factors'
import { verifyRegistration } from '~~/server/utils/accounts/passkeys'
import { factorAdded } from '~~/server/utils/accounts/sign-in'
import { requireSession } from '~~/server/utils/accounts/session-state'
import { requireSudo } from '~~/server/utils/accounts/sudo'

// Registers a passkey from the browser's response to the session's registration options.
export default defineEventHandler(async (event) => {
  const state = await requireSession(event)
  const { response, name } = await readValidBody(event, NewPasskeyBody)
  if (state.hasFactor) await requireSudo(event)
  const db = await useDb()
  const credential = await verifyRegistration(event, db, state.user.id, state.sessionId, response)
  if (!credential) throw createError({ statusCode: 400, statusMessage: 'The passkey could not be registered: its challenge, origin or user verification did not check out', data: { code: 'invalid_passkey' } })
  const factor = await addPasskey(db, state.user.id, credential, name)
  const extra = await factorAdded(event, db, state, 'passkey')
  setResponseStatus(event, 201)
  return { factor, ...extra }
})
