import type { H3Event } from 'h3'
import type { Queryable } from '../db/db-drivers'
import type { SecurityEvent, SecurityLogEntry, SecurityMethod } from '#shared/types/security'

export type { SecurityMethod }

/** Where a request came from, as the security log and the sessions list show it. */
export function requestOrigin(event: H3Event): { ip: string | null, userAgent: string | null } {
  return { ip: getRequestIP(event) ?? null, userAgent: getRequestHeader(event, 'user-agent')?.slice(0, 500) ?? null }
}

/** Records one event of the account's security log: what happened and how, never a secret, code or assertion. */
export async function logSecurityEvent(db: Queryable, event: H3Event, userId: string, name: SecurityEvent, method: SecurityMethod | null = null): Promise<void> {
  const { ip, userAgent } = requestOrigin(event)
  await db.query(
    'insert into public.security_events (user_id, event, method, ip, user_agent) values ($1, $2, $3, $4, $5)',
    [userId, name, method, ip, userAgent],
  )
}

/** The account's security log, newest first; `cursor` is the id of the last entry of the previous page. */
export async function listSecurityLog(db: Queryable, userId: string, limit: number, cursor: string | null): Promise<{ entries: SecurityLogEntry[], next_cursor: string | null }> {
  const { rows } = await db.query<SecurityLogEntry>(
    `select id::text, at, event, method, ip, user_agent
     from public.security_events
     where user_id = $1 and ($2::bigint is null or id < $2::bigint)
     order by id desc
     limit $3`,
    [userId, cursor, limit + 1],
  )
  const entries = rows.slice(0, limit)
  return { entries, next_cursor: rows.length > limit ? entries.at(-1)!.id : null }
}
