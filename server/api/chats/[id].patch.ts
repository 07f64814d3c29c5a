import { requireChatCaller } from '~~/server/utils/chat/access'
import { z } from 'zod'
import { renameChat } from '~~/server/utils/chat/chats'

const RenameBody = z.object({ title: z.string().trim().min(1).max(200) })

export default defineEventHandler(async (event) => {
  const caller = await requireChatCaller(event)
  const chatId = requireIdParam(event, 'id', 'Chat')
  const { title } = await readValidBody(event, RenameBody)
  return renameChat(caller.db, caller, chatId, title)
})
