import { requireChatCaller } from '~~/server/utils/chat/access'
import { listChats } from '~~/server/utils/chat/chats'

export default defineEventHandler(async (event) => {
  const caller = await requireChatCaller(event)
  return listChats(caller.db, caller)
})
