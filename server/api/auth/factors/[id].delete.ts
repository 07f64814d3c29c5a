import { findFactor, factorNotFound, removeFactor } from '~~/server/utils/accounts/factors'
import { logSecurityEvent } from '~~/server/utils/accounts/security-log'
import { requireSession } from '~~/server/utils/accounts/session-state'
import { requireSudo } from '~~/server/utils/accounts/sudo'

// Removing a factor: the owner's own (404 otherwise), in sudo, and not the last one a team requires (409).
export default defineEventHandler(async (event) => {
  const { user } = await requireSession(event)
  const factorId = requireIdParam(event, 'id', 'Factor')
  const db = await useDb()
  if (!await findFactor(db, user.id, factorId)) throw factorNotFound()
  await requireSudo(event)
  const removed = await db.transaction(tx => removeFactor(tx, user.id, factorId))
  await logSecurityEvent(db, event, user.id, 'factor_removed', removed.type)
  setResponseStatus(event, 204)
  return null
})
