import { RenameFactorBody } from '#shared/utils/security'
import { renameFactor } from '~~/server/utils/accounts/factors'
import { requireSession } from '~~/server/utils/accounts/session-state'

export default defineEventHandler(async (event) => {
  const { user } = await requireSession(event)
  const factorId = requireIdParam(event, 'id', 'Factor')
  const { name } = await readValidBody(event, RenameFactorBody)
  return { factor: await renameFactor(await useDb(), user.id, factorId, name) }
})
