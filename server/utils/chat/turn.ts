import { randomUUID } from 'node:crypto'
import type { H3Event } from 'h3'
import { z } from 'zod'
import type { ChatMessage, ChatMessageMetadata, TokenUsage } from '#shared/types/chat'
import type { ChatCaller } from './access'
import { applyApprovals, denyPending } from './approvals'
import { deleteMessages, loadMessages, recordTokenUsage, saveMessages, teamTokensThisMonth, titleFromFirstMessage, type Chat } from './chats'
import { chatModel } from './model'
import { systemPrompt } from './prompt'
import { useChatQueryTarget } from './query-pool'
import { chatTables, chatTools, newTurnState, queryAttemptsExhausted, tablesAllowed } from './tools'
import { valueHints } from './value-hints'
import { setting } from '../settings'
import { useTableRegistry } from '../records/table-registry'
import { logger } from '../log/logger'

const log = logger('chat')

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
async function prepareHistory(caller: ChatCaller, chat: Chat, turn: ChatTurn): Promise<ChatMessage[]> {
  const history = await loadMessages(caller.db, chat.id)
  const owned = { ...chat, userId: caller.userId, teamId: caller.teamId }
  const last = history.at(-1)
  if ('message' in turn) {
    if (history.some(message => message.id === turn.message.id)) throw createError({ statusCode: 409, statusMessage: 'This message was already sent' })
    const message: ChatMessage = { id: turn.message.id, role: 'user', parts: turn.message.parts }
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

/** The team's monthly token cap (CHAT_TEAM_MONTHLY_TOKENS); unset or empty: no cap. */
function monthlyTokenCap(): number | null {
  const value = setting('chatTeamMonthlyTokens').trim()
  if (!value) return null
  const cap = Number(value)
  return Number.isFinite(cap) && cap >= 0 ? cap : null
}

/** 429 when the team has used its tokens of the month: checked before anything is stored or a model is called. */
async function requireTokenBudget(caller: ChatCaller): Promise<void> {
  const cap = monthlyTokenCap()
  if (cap === null) return
  const used = await teamTokensThisMonth(caller.db, caller.teamId)
  if (used >= cap) {
    throw createError({ statusCode: 429, statusMessage: `Your team has used its chat allowance for this month (${used} of ${cap} tokens). It renews on the first of next month.` })
  }
}

const addUsage = (a: TokenUsage, b: TokenUsage): TokenUsage => ({ input: a.input + b.input, output: a.output + b.output })

/**
 * Runs one turn of a chat and answers it as an AI SDK UI message stream: the model continues the
 * stored conversation with the chat tools; approved writes run first; the answer is stored when it
 * ends, also when the user stopped it, with the tokens it used (also counted for the team's month).
 */
export async function streamChatTurn(event: H3Event, caller: ChatCaller, chat: Chat, turn: ChatTurn): Promise<Response> {
  await requireTokenBudget(caller)
  const history = await prepareHistory(caller, chat, turn)
  const [tables, registry] = await Promise.all([chatTables(), useTableRegistry()])
  const readable = tablesAllowed(tables, caller, 'view')
  const state = newTurnState()
  const tools = await chatTools(tables, registry, caller, chat.id, state)
  const writeToolNames = Object.keys(tools).filter(name => /^(create|update|delete)_/.test(name))
  const values = await valueHints(await useChatQueryTarget(), caller.teamId, readable).catch((error: Error) => {
    log.warn('No value hints', { error })
    return {}
  })
  const owned = { ...chat, userId: caller.userId, teamId: caller.teamId }
  // an approval continues the last answer: its earlier usage counts towards the message
  const continued = history.at(-1)?.role === 'assistant' ? history.at(-1)!.metadata?.usage : undefined
  let used: TokenUsage = { input: 0, output: 0 }
  // the AI SDK is imported with the first turn, not at start-up
  const { consumeStream, convertToModelMessages, stepCountIs, streamText } = await import('ai')
  const result = streamText({
    model: await chatModel(),
    system: systemPrompt(caller, readable, writeToolNames, values),
    messages: await convertToModelMessages(history, { tools, ignoreIncompleteToolCalls: true }),
    tools,
    stopWhen: [stepCountIs(12), queryAttemptsExhausted(state)],
    abortSignal: requestAbortSignal(event),
  })
  return result.toUIMessageStreamResponse<ChatMessage>({
    originalMessages: history,
    generateMessageId: randomUUID,
    consumeSseStream: consumeStream,
    messageMetadata: ({ part }): ChatMessageMetadata | undefined => {
      if (part.type === 'finish-step') {
        used = addUsage(used, { input: part.usage.inputTokens ?? 0, output: part.usage.outputTokens ?? 0 })
        return { usage: addUsage(continued ?? { input: 0, output: 0 }, used) }
      }
      if (part.type === 'tool-approval-request') {
        const proposal = state.proposals.get(part.toolCall.toolCallId)
        return proposal ? { proposals: { [part.toolCall.toolCallId]: proposal } } : undefined
      }
      return undefined
    },
    onFinish: async ({ responseMessage }) => {
      if (responseMessage.parts.length) {
        responseMessage.metadata = { ...responseMessage.metadata, usage: addUsage(continued ?? { input: 0, output: 0 }, used) }
        await saveMessages(caller.db, owned, [responseMessage])
      }
      if (used.input || used.output) await recordTokenUsage(caller.db, owned, used)
    },
    onError: (error) => {
      log.error('The model failed', { error })
      return 'The assistant could not answer. Try again.'
    },
  })
}
