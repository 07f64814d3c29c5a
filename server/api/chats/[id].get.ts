import { requireChatCaller } from '~~/server/utils/chat/access'
import { loadMessages, requireChatOwner } from '~~/server/utils/chat/chats'

export default defineEventHandler(async (event) => {
  const caller = await requireChatCaller(event)
  const chat = await requireChatOwner(caller.db, caller, requireIdParam(event, 'id', 'Chat'))
  return { id: chat.id, title: chat.title, created_at: chat.created_at, updated_at: chat.updated_at, messages: await loadMessages(caller.db, chat.id) }
})
