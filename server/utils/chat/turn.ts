import { randomUUID } from 'node:crypto'
import type { H3Event } from 'h3'
import { consumeStream, convertToModelMessages, stepCountIs, streamText, type UIMessage } from 'ai'
import { z } from 'zod'
import type { ChatCaller } from './access'
import { applyApprovals, denyPending } from './approvals'
import { deleteMessages, loadMessages, saveMessages, titleFromFirstMessage, type Chat } from './chats'
import { chatModel } from './model'
import { systemPrompt } from './prompt'
import { chatTables, chatTools, tablesAllowed } from './tools'

/**
 * What the browser may send for a turn: the new user message (text only), the answers to the
 * pending tool approvals, or a request to regenerate the last answer. History never comes from
 * the client: it is loaded from the database.
 */
export const ChatTurnBody = z.union([
  z.strictObject({
    message: z.object({
      id: z.string().trim().min(1).max(100),
      role: z.literal('user'),
      parts: z.array(z.object({ type: z.literal('text'), text: z.string().max(20_000) })).min(1).max(20),
    }),
  }),
  z.strictObject({
    approvals: z.array(z.strictObject({
      id: z.string().min(1).max(200),
      approved: z.boolean(),
      reason: z.string().max(1000).optional(),
    })).min(1).max(20),
  }),
  z.strictObject({ regenerate: z.literal(true) }),
], { error: 'Send { message }, { approvals } or { regenerate: true }' })
export type ChatTurn = z.output<typeof ChatTurnBody>

/** Applies the turn to the stored history and returns the conversation the model continues. */
async function prepareHistory(caller: ChatCaller, chat: Chat, turn: ChatTurn): Promise<UIMessage[]> {
  const history = await loadMessages(caller.db, chat.id)
  const owned = { ...chat, userId: caller.userId, teamId: caller.teamId }
  const last = history.at(-1)
  if ('message' in turn) {
    if (history.some(message => message.id === turn.message.id)) throw createError({ statusCode: 409, statusMessage: 'This message was already sent' })
    const message: UIMessage = { id: turn.message.id, role: 'user', parts: turn.message.parts }
    const changed = denyPending(last) ? [last!, message] : [message]
    await saveMessages(caller.db, owned, changed)
    if (!history.some(m => m.role === 'user')) await titleFromFirstMessage(caller.db, chat.id, turn.message.parts.map(p => p.text).join(' '))
    return [...history, message]
  }
  if ('approvals' in turn) {
    applyApprovals(last, turn.approvals)
    await saveMessages(caller.db, owned, [last!])
    return history
  }
  const lastUser = history.findLastIndex(message => message.role === 'user')
  if (lastUser < 0) throw createError({ statusCode: 409, statusMessage: 'There is no question to answer again' })
  await deleteMessages(caller.db, chat.id, history.slice(lastUser + 1).map(message => message.id))
  return history.slice(0, lastUser + 1)
}

/** Aborted when the browser goes away (Stop): the partial answer is still stored. */
function requestAbortSignal(event: H3Event): AbortSignal {
  const controller = new AbortController()
  event.node.res.once('close', () => {
    if (!event.node.res.writableFinished) controller.abort()
  })
  return controller.signal
}

/**
 * Runs one turn of a chat and answers it as an AI SDK UI message stream: the model continues the
 * stored conversation with the chat tools; approved writes run first; the answer is stored when it
 * ends, also when the user stopped it.
 */
export async function streamChatTurn(event: H3Event, caller: ChatCaller, chat: Chat, turn: ChatTurn): Promise<Response> {
  const history = await prepareHistory(caller, chat, turn)
  const tables = await chatTables()
  const tools = chatTools(tables, caller, chat.id)
  const writeToolNames = Object.keys(tools).filter(name => /^(create|update|delete)_/.test(name))
  const owned = { ...chat, userId: caller.userId, teamId: caller.teamId }
  const result = streamText({
    model: chatModel(),
    system: systemPrompt(caller, tablesAllowed(tables, caller, 'view'), writeToolNames),
    messages: await convertToModelMessages(history, { tools, ignoreIncompleteToolCalls: true }),
    tools,
    stopWhen: stepCountIs(12),
    abortSignal: requestAbortSignal(event),
  })
  return result.toUIMessageStreamResponse({
    originalMessages: history,
    generateMessageId: randomUUID,
    consumeSseStream: consumeStream,
    onFinish: async ({ responseMessage }) => {
      if (responseMessage.parts.length) await saveMessages(caller.db, owned, [responseMessage])
    },
    onError: (error) => {
      console.error('[chat] the model failed', error)
      return 'The assistant could not answer. Try again.'
    },
  })
}
