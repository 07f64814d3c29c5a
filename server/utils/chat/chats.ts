import type { ChatMessage, ChatSummary, TokenUsage } from '#shared/types/chat'
import type { Database } from '../db/db-drivers'
import { storableJson } from '../validation'

export type Chat = ChatSummary

/** Who a chat belongs to: the signed-in user in their current team. */
export interface ChatOwner {
  userId: string
  teamId: string
}

export const defaultChatTitle = 'New chat'

const chatColumns = 'id, title, created_at, updated_at'

/**
 * A page of the owner's chats in the team, most recently active first (50 unless asked). Bounded:
 * the chat page renders every chat listed, and a user's chats only ever grow.
 */
export async function listChats(db: Database, owner: ChatOwner, page: { limit: number, offset: number } = { limit: 50, offset: 0 }): Promise<Chat[]> {
  const { rows } = await db.query<Chat>(
    `select ${chatColumns} from public.chats where team_id = $1 and user_id = $2 order by updated_at desc, created_at desc, id limit $3 offset $4`,
    [owner.teamId, owner.userId, page.limit, page.offset],
  )
  return rows
}

export async function createChat(db: Database, owner: ChatOwner, title?: string): Promise<Chat> {
  const { rows } = await db.query<Chat>(
    `insert into public.chats (team_id, user_id, title) values ($1, $2, $3) returning ${chatColumns}`,
    [owner.teamId, owner.userId, title || defaultChatTitle],
  )
  return rows[0]!
}

/** The chat if the owner owns it in the team; a 404 otherwise (another user's chat cannot be told from a missing one). */
export async function requireChatOwner(db: Database, owner: ChatOwner, chatId: string): Promise<Chat> {
  const { rows } = await db.query<Chat>(
    `select ${chatColumns} from public.chats where id = $1 and team_id = $2 and user_id = $3`,
    [chatId, owner.teamId, owner.userId],
  )
  if (!rows[0]) throw createError({ statusCode: 404, statusMessage: 'Chat not found' })
  return rows[0]
}

export async function renameChat(db: Database, owner: ChatOwner, chatId: string, title: string): Promise<Chat> {
  const { rows } = await db.query<Chat>(
    `update public.chats set title = $4, updated_at = now() where id = $1 and team_id = $2 and user_id = $3 returning ${chatColumns}`,
    [chatId, owner.teamId, owner.userId, title],
  )
  if (!rows[0]) throw createError({ statusCode: 404, statusMessage: 'Chat not found' })
  return rows[0]
}

export async function deleteChat(db: Database, owner: ChatOwner, chatId: string): Promise<void> {
  const { rowCount } = await db.query(
    'delete from public.chats where id = $1 and team_id = $2 and user_id = $3',
    [chatId, owner.teamId, owner.userId],
  )
  if (!rowCount) throw createError({ statusCode: 404, statusMessage: 'Chat not found' })
}

interface MessageRow {
  id: string
  role: ChatMessage['role']
  parts: ChatMessage['parts']
  metadata: ChatMessage['metadata'] | null
  input_tokens: number | null
  output_tokens: number | null
}

/** The chat's messages in conversation order, as AI SDK UIMessages; an answer's token usage is in its metadata. */
export async function loadMessages(db: Database, chatId: string): Promise<ChatMessage[]> {
  const { rows } = await db.query<MessageRow>(
    'select id, role, parts, metadata, input_tokens, output_tokens from public.chat_messages where chat_id = $1 order by position',
    [chatId],
  )
  return rows.map((row) => {
    const usage = row.input_tokens === null || row.output_tokens === null ? undefined : { input: row.input_tokens, output: row.output_tokens }
    const metadata = { ...row.metadata, ...(usage ? { usage } : {}) }
    return { id: row.id, role: row.role, parts: row.parts, ...(Object.keys(metadata).length ? { metadata } : {}) }
  })
}

/** The sum of the answers' usage. */
export function chatUsage(messages: ChatMessage[]): TokenUsage {
  return messages.reduce((sum, message) => ({
    input: sum.input + (message.metadata?.usage?.input ?? 0),
    output: sum.output + (message.metadata?.usage?.output ?? 0),
  }), { input: 0, output: 0 })
}

/** Stores messages (new ones appended, known ones replaced in place, usage in its own columns) and marks the chat active. */
export async function saveMessages(db: Database, chat: Chat & ChatOwner, messages: ChatMessage[]): Promise<void> {
  await db.transaction(async (tx) => {
    for (const message of messages) {
      const { usage, ...metadata } = message.metadata ?? {}
      await tx.query(
        `insert into public.chat_messages (id, chat_id, team_id, user_id, role, parts, metadata, input_tokens, output_tokens)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         on conflict (chat_id, id) do update set parts = excluded.parts, metadata = excluded.metadata,
           input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, updated_at = now()`,
        [message.id, chat.id, chat.teamId, chat.userId, message.role, storableJson(message.parts),
          Object.keys(metadata).length ? storableJson(metadata) : null, usage?.input ?? null, usage?.output ?? null],
      )
    }
    await tx.query('update public.chats set updated_at = now() where id = $1', [chat.id])
  })
}

/** Adds the tokens of an answered turn to the team's ledger. */
export async function recordTokenUsage(db: Database, chat: Chat & ChatOwner, usage: TokenUsage): Promise<void> {
  await db.query(
    'insert into public.chat_token_usage (team_id, user_id, chat_id, input_tokens, output_tokens) values ($1, $2, $3, $4, $5)',
    [chat.teamId, chat.userId, chat.id, usage.input, usage.output],
  )
}

/** The tokens the team's chats used in the current calendar month (UTC). */
export async function teamTokensThisMonth(db: Database, teamId: string): Promise<number> {
  const { rows } = await db.query<{ total: string | number }>(
    `select coalesce(sum(input_tokens + output_tokens), 0)::bigint as total from public.chat_token_usage
     where team_id = $1 and created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'`,
    [teamId],
  )
  return Number(rows[0]!.total)
}

/** Removes messages from the conversation (regenerating replaces the last answer). */
export async function deleteMessages(db: Database, chatId: string, messageIds: string[]): Promise<void> {
  if (!messageIds.length) return
  await db.query('delete from public.chat_messages where chat_id = $1 and id = any($2::text[])', [chatId, messageIds])
}

/** Names a chat after its first question, while it still has the default title. */
export async function titleFromFirstMessage(db: Database, chatId: string, text: string): Promise<void> {
  const title = text.replace(/\s+/g, ' ').trim().slice(0, 80)
  if (!title) return
  await db.query('update public.chats set title = $2 where id = $1 and title = $3', [chatId, title, defaultChatTitle])
}
