import { requireChatCaller } from '~~/server/utils/chat/access'
import { z } from 'zod'
import { createChat } from '~~/server/utils/chat/chats'

const NewChatBody = z.object({ title: z.string().trim().min(1).max(200).optional() })

export default defineEventHandler(async (event) => {
  const caller = await requireChatCaller(event)
  const { title } = await readValidBody(event, NewChatBody)
  const chat = await createChat(caller.db, caller, title)
  setResponseStatus(event, 201)
  return { id: chat.id, title: chat.title, created_at: chat.created_at }
})
