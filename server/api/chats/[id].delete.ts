import { requireChatCaller } from '~~/server/utils/chat/access'
import { deleteChat } from '~~/server/utils/chat/chats'

export default defineEventHandler(async (event) => {
  const caller = await requireChatCaller(event)
  await deleteChat(caller.db, caller, requireIdParam(event, 'id', 'Chat'))
  setResponseStatus(event, 204)
  return null
})
