import { z } from 'zod'
import { streamMemberEvents } from '~~/server/utils/changes/member-feed'

export default defineEventHandler(async (event) => {
  const context = await authUser(event, null)
  const { after } = readValidQuery(event, z.object({ after: z.string().max(64).optional() }))
  await streamMemberEvents(event, context, after)
})
