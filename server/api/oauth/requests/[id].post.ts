import { ConsentDecisionBody } from '#shared/utils/oauth'
import { requireSudo } from '~~/server/utils/accounts/sudo'
import { decideConsent } from '~~/server/utils/oauth/grants'

// POST /api/oauth/requests/{id}: approve (team and per-table access) or deny; answers where the browser goes next.
export default defineEventHandler(async (event) => {
  const user = await requireUser(event)
  const requestId = requireIdParam(event, 'id', 'Authorization request')
  const decision = await readValidBody(event, ConsentDecisionBody)
  if (decision.decision === 'approve') await requireSudo(event)
  return decideConsent(user.id, requestId, decision)
})
