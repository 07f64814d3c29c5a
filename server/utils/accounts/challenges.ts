import { randomBytes } from 'node:crypto'
import type { H3Event } from 'h3'
import type { Queryable } from '../db-drivers'

export type ChallengePurpose = 'register' | 'sign_in' | 'second_factor' | 'reauth'

/** What a challenge is bound to: the session, or (before sign-in) the nonce of a short-lived cookie. */
export type ChallengeBinding = { sessionId: string } | { nonce: string }

const nonceCookie = 'tws-webauthn'
const challengeSeconds = 300

/** Binds a passwordless ceremony to this browser: a new nonce in a short-lived, HTTP-only cookie. */
export function setChallengeCookie(event: H3Event): { nonce: string } {
  const nonce = randomBytes(24).toString('base64url')
  setCookie(event, nonceCookie, nonce, {
    httpOnly: true, sameSite: 'lax', path: '/api/auth', maxAge: challengeSeconds,
    secure: getRequestProtocol(event, { xForwardedProto: true }) === 'https',
  })
  return { nonce }
}

/** The nonce of the browser's passwordless ceremony, or null. */
export function challengeCookie(event: H3Event): { nonce: string } | null {
  const nonce = getCookie(event, nonceCookie)
  return nonce ? { nonce } : null
}

/** Keeps a challenge on the server for five minutes (and drops the expired ones). */
export async function storeChallenge(db: Queryable, challenge: string, purpose: ChallengePurpose, binding: ChallengeBinding, userId: string | null): Promise<void> {
  await db.query('delete from public.webauthn_challenges where expires_at < now()')
  await db.query(
    `insert into public.webauthn_challenges (challenge, purpose, session_id, nonce, user_id, expires_at)
     values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [challenge, purpose, 'sessionId' in binding ? binding.sessionId : null, 'nonce' in binding ? binding.nonce : null, userId, challengeSeconds],
  )
}

/** The challenge a WebAuthn response signed (from its clientDataJSON), or null when unreadable. */
export function respondedChallenge(response: unknown): string | null {
  try {
    const clientData = (response as { response?: { clientDataJSON?: unknown } })?.response?.clientDataJSON
    if (typeof clientData !== 'string' || clientData.length > 4096) return null
    const parsed = JSON.parse(Buffer.from(clientData, 'base64url').toString('utf8')) as { challenge?: unknown }
    return typeof parsed.challenge === 'string' ? parsed.challenge : null
  }
  catch {
    return null
  }
}

/**
 * Takes (deletes) the live challenge of this purpose and binding that the response signed: a
 * challenge works once, for five minutes. Answers the challenge and the account it was issued for.
 */
export async function takeChallenge(db: Queryable, response: unknown, purpose: ChallengePurpose, binding: ChallengeBinding): Promise<{ challenge: string, userId: string | null } | null> {
  const challenge = respondedChallenge(response)
  if (!challenge) return null
  const { rows } = await db.query<{ challenge: string, user_id: string | null }>(
    `delete from public.webauthn_challenges
     where challenge = $1 and purpose = $2 and expires_at > now()
       and (session_id = $3 or nonce = $4)
     returning challenge, user_id`,
    [challenge, purpose, 'sessionId' in binding ? binding.sessionId : null, 'nonce' in binding ? binding.nonce : null],
  )
  return rows[0] ? { challenge: rows[0].challenge, userId: rows[0].user_id } : null
}
