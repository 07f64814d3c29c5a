import type { H3Event } from 'h3'
import type { Queryable } from '../db/db-drivers'
import { logSecurityEvent } from './security-log'
import type { SessionState } from './session-state'
import type { AccountSession } from '#shared/types/security'

/** The account's live sessions, newest first, the request's own marked `current`. */
export async function listSessions(db: Queryable, state: SessionState): Promise<AccountSession[]> {
  const { rows } = await db.query<AccountSession>(
    `select id, id = $2 as current, aal, created_at, last_seen_at, ip, user_agent
     from public.user_sessions where user_id = $1
     order by created_at desc, id`,
    [state.user.id, state.sessionId],
  )
  return rows
}

/** Ends one of the account's sessions (404 for another account's or an ended one). */
export async function endSession(db: Queryable, event: H3Event, state: SessionState, sessionId: string): Promise<void> {
  const { rowCount } = await db.query('delete from public.user_sessions where id = $1 and user_id = $2', [sessionId, state.user.id])
  if (!rowCount) throw createError({ statusCode: 404, statusMessage: 'Session not found', data: { code: 'not_found' } })
  await logSecurityEvent(db, event, state.user.id, 'session_ended')
}

/** Ends every session of the account but the request's own; answers how many ended. */
export async function endOtherSessions(db: Queryable, event: H3Event, state: SessionState): Promise<number> {
  const { rowCount } = await db.query('delete from public.user_sessions where user_id = $1 and id <> $2', [state.user.id, state.sessionId])
  if (rowCount) await logSecurityEvent(db, event, state.user.id, 'session_ended')
  return rowCount
}
