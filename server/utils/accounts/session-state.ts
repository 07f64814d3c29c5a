import type { H3Event } from 'h3'
import type { User } from '#auth-utils'
import type { Queryable } from '../db-drivers'
import { requestOrigin, type SecurityMethod } from './security-log'

/** The signed-in session of a request as its row says: level, methods, sudo window, and whether the account has a factor. */
export interface SessionState {
  user: User
  sessionId: string
  currentTeamId: string | null
  aal: 1 | 2
  methods: SecurityMethod[]
  sudoUntil: Date | null
  createdAt: Date
  hasFactor: boolean
}

interface SessionRow {
  aal: 1 | 2
  methods: SecurityMethod[]
  sudo_until: Date | null
  created_at: Date
  stale: boolean
  has_factor: boolean
}

/** How long a session's `last_seen_at` may lag: it is written at most this often, never on every request. */
const lastSeenEverySeconds = 60

const stateKey = 'accountSession'

/**
 * The request's session, read once per request from its row (a primary-key read, so a session
 * ended on any instance is refused at once); null without a cookie or when the row is gone.
 * Refreshes `last_seen_at` when it is more than a minute old.
 */
export async function readSessionState(event: H3Event): Promise<SessionState | null> {
  const cached = event.context[stateKey] as SessionState | null | undefined
  if (cached !== undefined) return cached
  const session = await getUserSession(event)
  let state: SessionState | null = null
  if (session.user && session.sessionId) {
    const db = await useDb()
    const { rows } = await db.query<SessionRow>(
      `select s.aal, s.methods, s.sudo_until, s.created_at,
              s.last_seen_at < now() - make_interval(secs => $3) as stale,
              exists (select 1 from public.auth_factors f where f.user_id = s.user_id and f.verified_at is not null) as has_factor
       from public.user_sessions s where s.id = $1 and s.user_id = $2`,
      [session.sessionId, session.user.id, lastSeenEverySeconds],
    )
    const row = rows[0]
    if (row) {
      if (row.stale) await db.query('update public.user_sessions set last_seen_at = now() where id = $1', [session.sessionId])
      state = {
        user: session.user, sessionId: session.sessionId, currentTeamId: session.currentTeamId ?? null,
        aal: row.aal, methods: row.methods, sudoUntil: row.sudo_until, createdAt: row.created_at, hasFactor: row.has_factor,
      }
    }
  }
  event.context[stateKey] = state
  return state
}

/** Forgets the request's cached session (after its row changed). */
export function forgetSessionState(event: H3Event): void {
  event.context[stateKey] = undefined
}

/**
 * The request's session, or a 401: without one, when it has ended, and (unless `pending` is
 * allowed) `mfa_required` while an account with a second factor has given only its password.
 */
export async function requireSession(event: H3Event, options: { pending?: 'allow' } = {}): Promise<SessionState> {
  const session = await getUserSession(event)
  if (!session.user) throw createError({ statusCode: 401, statusMessage: 'Sign in first', data: { code: 'not_signed_in' } })
  const state = await readSessionState(event)
  if (!state) throw createError({ statusCode: 401, statusMessage: 'This session has ended; sign in again', data: { code: 'session_ended' } })
  if (options.pending !== 'allow' && isPending(state)) {
    throw createError({ statusCode: 401, statusMessage: 'Enter the code of your second factor first', data: { code: 'mfa_required' } })
  }
  return state
}

/** Whether the session still owes its second factor. */
export function isPending(state: SessionState): boolean {
  return state.aal < 2 && state.hasFactor
}

export interface NewSession {
  aal: 1 | 2
  methods: SecurityMethod[]
  /** Seconds of sudo to open (0: none). */
  sudoSeconds: number
}

/** Inserts a session row for the user and returns its id. */
export async function insertSession(db: Queryable, event: H3Event, userId: string, fields: NewSession): Promise<string> {
  const { ip, userAgent } = requestOrigin(event)
  const { rows } = await db.query<{ id: string }>(
    `insert into public.user_sessions (user_id, aal, methods, sudo_until, ip, user_agent)
     values ($1, $2, $3, case when $4::int > 0 then now() + make_interval(secs => $4) end, $5, $6)
     returning id`,
    [userId, fields.aal, fields.methods, fields.sudoSeconds, ip, userAgent],
  )
  return rows[0]!.id
}
