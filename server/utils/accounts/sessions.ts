import type { H3Event } from 'h3'
import type { User, UserSession } from '#auth-utils'
import type { Queryable } from '../db/db-drivers'
import { useDb } from '../db/database'

/** Starts a server-side session for the user and seals its id into the session cookie. */
export async function startSession(event: H3Event, user: User, currentTeamId: string | null): Promise<void> {
  const db = await useDb()
  const { rows } = await db.query<{ id: string }>('insert into public.user_sessions (user_id) values ($1) returning id', [user.id])
  await replaceUserSession(event, { user, currentTeamId, sessionId: rows[0]!.id })
}

/** Whether the cookie's session still exists for its user (one primary-key read). */
export async function isSessionLive(db: Queryable, session: UserSession): Promise<boolean> {
  if (!session.user || !session.sessionId) return false
  const { rowCount } = await db.query('select 1 from public.user_sessions where id = $1 and user_id = $2', [session.sessionId, session.user.id])
  return rowCount > 0
}

/** Ends the user's sessions: all of them, or all but `keepSessionId`. Returns how many ended. */
export async function endUserSessions(db: Queryable, userId: string, keepSessionId?: string): Promise<number> {
  const { rowCount } = keepSessionId
    ? await db.query('delete from public.user_sessions where user_id = $1 and id <> $2', [userId, keepSessionId])
    : await db.query('delete from public.user_sessions where user_id = $1', [userId])
  return rowCount
}
