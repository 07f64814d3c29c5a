import type { ChatDetail } from '#shared/types/chat'
import { requireChatCaller } from '~~/server/utils/chat/access'
import { chatUsage, loadMessages, requireChatOwner } from '~~/server/utils/chat/chats'

export default defineEventHandler(async (event) => {
  const caller = await requireChatCaller(event)
  const chat = await requireChatOwner(caller.db, caller, requireIdParam(event, 'id', 'Chat'))
  const messages = await loadMessages(caller.db, chat.id)
  const detail: ChatDetail = { ...chat, messages, usage: chatUsage(messages) }
  return detail
})
