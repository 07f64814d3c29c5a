import { PageQuery } from '#shared/utils/patterns'
import { requireChatCaller } from '~~/server/utils/chat/access'
import { listChats } from '~~/server/utils/chat/chats'

export default defineEventHandler(async (event) => {
  const caller = await requireChatCaller(event)
  const page = readValidQuery(event, PageQuery)
  return listChats(caller.db, caller, page)
})
