import type { H3Event } from 'h3'
import type { User } from '#auth-utils'
import { can, type Role } from '#shared/permissions'
import type { Database } from '../db/db-drivers'
import type { ChatOwner } from './chats'
import { setting } from '../settings'
import { authSignedIn } from '../accounts/auth'
import { useDb } from '../db/database'
import { userTeams } from '../accounts/accounts'

/** The caller of a chat route: a signed-in member of their current team who may use the chat. */
export interface ChatCaller extends ChatOwner {
  user: User
  teamName: string
  role: Role
  db: Database
}

/** Whether an LLM provider key is configured; without one the chat does not exist. */
export function isChatEnabled(): boolean {
  return Boolean(setting('llmProviderApiKey'))
}

/**
 * Authenticates a chat route: 404 while the chat is disabled, 401 without a session,
 * 404 without a current team, 403 without chat.use. The team is the session's current team.
 */
export async function requireChatCaller(event: H3Event): Promise<ChatCaller> {
  if (!isChatEnabled()) throw createError({ statusCode: 404, statusMessage: 'Not found' })
  const { user, client } = await authSignedIn(event)
  const session = await getUserSession(event)
  const db = await useDb()
  // the same current team as GET /api/auth/me
  const { current: team } = await userTeams(client, session.currentTeamId)
  if (!team) throw createError({ statusCode: 404, statusMessage: 'Join or create a team first' })
  if (!can(team.role, 'chat.use')) throw createError({ statusCode: 403, statusMessage: `Your role (${team.role}) does not allow chat.use` })
  return { user, userId: user.id, teamId: team.id, teamName: team.name, role: team.role, db }
}
