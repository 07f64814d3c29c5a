import { consentRequest } from '~~/server/utils/oauth/grants'

// GET /api/oauth/requests/{id}: an authorization request as the consent page shows it (signed in).
export default defineEventHandler(async (event) => {
  const user = await requireUser(event)
  return consentRequest(user.id, requireIdParam(event, 'id', 'Authorization request'))
})
