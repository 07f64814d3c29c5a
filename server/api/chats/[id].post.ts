import { requireChatCaller } from '~~/server/utils/chat/access'
import { requireChatOwner } from '~~/server/utils/chat/chats'
import { ChatTurnBody, streamChatTurn } from '~~/server/utils/chat/turn'

// One turn of the conversation, streamed as an AI SDK UI message stream.
export default defineEventHandler(async (event) => {
  const caller = await requireChatCaller(event)
  const chat = await requireChatOwner(caller.db, caller, requireIdParam(event, 'id', 'Chat'))
  const turn = await readValidBody(event, ChatTurnBody)
  return streamChatTurn(event, caller, chat, turn)
})
