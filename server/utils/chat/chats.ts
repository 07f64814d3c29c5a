import type { UIMessage } from 'ai'
import type { Database } from '../db'

export interface Chat {
  id: string
  title: string
  created_at: string
  updated_at: string
}

/** Who a chat belongs to: the signed-in user in their current team. */
export interface ChatOwner {
  userId: string
  teamId: string
}

export const defaultChatTitle = 'New chat'

const chatColumns = 'id, title, created_at, updated_at'

/** The owner's chats in the team, most recently active first. */
export async function listChats(db: Database, owner: ChatOwner): Promise<Chat[]> {
  const { rows } = await db.query<Chat>(
    `select ${chatColumns} from public.chats where team_id = $1 and user_id = $2 order by updated_at desc, created_at desc`,
    [owner.teamId, owner.userId],
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

/** The chat's messages in conversation order, as AI SDK UIMessages. */
export async function loadMessages(db: Database, chatId: string): Promise<UIMessage[]> {
  const { rows } = await db.query<{ id: string, role: UIMessage['role'], parts: UIMessage['parts'], metadata: unknown }>(
    'select id, role, parts, metadata from public.chat_messages where chat_id = $1 order by position',
    [chatId],
  )
  return rows.map(row => ({ id: row.id, role: row.role, parts: row.parts, ...(row.metadata ? { metadata: row.metadata } : {}) }))
}

/** Stores messages (new ones appended, known ones replaced in place) and marks the chat active. */
export async function saveMessages(db: Database, chat: Chat & ChatOwner, messages: UIMessage[]): Promise<void> {
  await db.transaction(async (tx) => {
    for (const message of messages) {
      await tx.query(
        `insert into public.chat_messages (id, chat_id, team_id, user_id, role, parts, metadata)
         values ($1, $2, $3, $4, $5, $6, $7)
         on conflict (chat_id, id) do update set parts = excluded.parts, metadata = excluded.metadata, updated_at = now()`,
        [message.id, chat.id, chat.teamId, chat.userId, message.role, JSON.stringify(message.parts), message.metadata === undefined ? null : JSON.stringify(message.metadata)],
      )
    }
    await tx.query('update public.chats set updated_at = now() where id = $1', [chat.id])
  })
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
