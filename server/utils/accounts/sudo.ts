import type { H3Event } from 'h3'
import type { Queryable } from '../db-drivers'
import { requireSession, type SessionState } from './session-state'

/** Seconds a re-authentication (or a sign-in) keeps powerful actions open: SUDO_WINDOW_SECONDS, default 900. */
export function sudoWindowSeconds(): number {
  const config = useRuntimeConfig() as unknown as { sudoWindowSeconds?: string | number }
  const value = Number(config.sudoWindowSeconds || process.env.SUDO_WINDOW_SECONDS || 900)
  return Number.isInteger(value) && value > 0 ? value : 900
}

/** What this account may re-authenticate with: its password while it has no factor, else its factors' kinds. */
export async function reauthMethods(db: Queryable, state: Pick<SessionState, 'user' | 'hasFactor'>): Promise<string[]> {
  if (!state.hasFactor) return ['password']
  const { rows } = await db.query<{ type: string }>(
    'select distinct type from public.auth_factors where user_id = $1 and verified_at is not null order by type desc',
    [state.user.id],
  )
  return rows.map(row => row.type)
}

/**
 * Requires a live sudo window on the request's session, else 403 `reauth_required` naming the
 * methods the account may use. Call it after the permission check and before any state check.
 */
export async function requireSudo(event: H3Event): Promise<SessionState> {
  const state = await requireSession(event)
  if (state.sudoUntil && state.sudoUntil.getTime() > Date.now()) return state
  const methods = await reauthMethods(await useDb(), state)
  throw createError({ statusCode: 403, statusMessage: 'Confirm it is you before this action', data: { code: 'reauth_required', methods } })
}

/** Opens the session's sudo window for the configured time; answers its end. */
export async function openSudo(db: Queryable, sessionId: string): Promise<Date> {
  const { rows } = await db.query<{ sudo_until: Date }>(
    'update public.user_sessions set sudo_until = now() + make_interval(secs => $2) where id = $1 returning sudo_until',
    [sessionId, sudoWindowSeconds()],
  )
  if (!rows[0]) throw createError({ statusCode: 401, statusMessage: 'This session has ended; sign in again', data: { code: 'session_ended' } })
  return rows[0].sudo_until
}
