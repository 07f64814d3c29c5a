import type { H3Event } from 'h3'
import type { User } from '#auth-utils'
import type { z } from 'zod'
import type { SecondFactorBody } from '#shared/utils/security'
import type { Database, Queryable } from '../db/db-drivers'
import { challengeCookie, type ChallengeBinding, type ChallengePurpose } from './challenges'
import {
  checkTotpCode, factorNotFound, findFactor, invalidCode, recordSecondFactorFailure, secondFactorRetryAfter, signInFactors,
  tooManyAttempts, type Factor,
} from './factors'
import { passkeyOwner, verifyAssertion } from './passkeys'
import { replaceRecoveryCodes, useRecoveryCode } from './recovery-codes'
import { logSecurityEvent, requestOrigin, type SecurityMethod } from './security-log'
import { forgetSessionState, insertSession, type NewSession, type SessionState } from './session-state'
import { sudoWindowSeconds } from './sudo'

/** Starts a new session (a new row and a new cookie) for the user. */
export async function beginSession(event: H3Event, db: Queryable, user: User, currentTeamId: string | null, fields: NewSession): Promise<string> {
  const sessionId = await insertSession(db, event, user.id, fields)
  await replaceUserSession(event, { user, currentTeamId, sessionId })
  forgetSessionState(event)
  return sessionId
}

export type PasswordSignInAnswer = { user: User } | { mfa_required: true, factors: Pick<Factor, 'id' | 'type' | 'name'>[] }

/**
 * The session after a right password: at level 1 with sudo open for an account without factors;
 * for one with factors, at level 1 waiting for the second factor (nothing but that step answers).
 */
export async function afterPassword(event: H3Event, db: Queryable, user: User, currentTeamId: string | null): Promise<PasswordSignInAnswer> {
  const factors = await signInFactors(db, user.id)
  if (factors.length) {
    await beginSession(event, db, user, currentTeamId, { aal: 1, methods: ['password'], sudoSeconds: 0 })
    return { mfa_required: true, factors }
  }
  await beginSession(event, db, user, currentTeamId, { aal: 1, methods: ['password'], sudoSeconds: sudoWindowSeconds() })
  await logSecurityEvent(db, event, user.id, 'sign_in', 'password')
  return { user }
}

/** Records a wrong password for an existing account in its security log (an unknown e-mail has no log). */
export async function logPasswordFailure(event: H3Event, db: Queryable, email: string): Promise<void> {
  const { rows } = await db.query<{ id: string }>('select id from public.profiles where lower(email) = $1', [email])
  if (rows[0]) await logSecurityEvent(db, event, rows[0].id, 'sign_in_failed', 'password')
}

/**
 * Raises the session to level 2 under a new id (a new row replacing the old one, and a new cookie):
 * a session id known before the second factor is worth nothing after it. `openSudo` opens the
 * sudo window (a sign-in), else the window stays as it was.
 */
export async function raiseSession(event: H3Event, db: Database, state: SessionState, method: SecurityMethod, openSudo: boolean): Promise<string> {
  const { ip, userAgent } = requestOrigin(event)
  const sessionId = await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      `insert into public.user_sessions (user_id, aal, methods, sudo_until, created_at, ip, user_agent)
       select user_id, 2, array(select distinct unnest(methods || array[$2::text])),
              case when $3::int > 0 then now() + make_interval(secs => $3) else sudo_until end, created_at, $4, $5
       from public.user_sessions where id = $1
       returning id`,
      [state.sessionId, method, openSudo ? sudoWindowSeconds() : 0, ip, userAgent],
    )
    if (!rows[0]) throw createError({ statusCode: 401, statusMessage: 'This session has ended; sign in again', data: { code: 'session_ended' } })
    await tx.query('delete from public.user_sessions where id = $1', [state.sessionId])
    return rows[0].id
  })
  await replaceUserSession(event, { user: state.user, currentTeamId: state.currentTeamId, sessionId })
  forgetSessionState(event)
  return sessionId
}

/** 429 with Retry-After while the account's second factors are throttled. */
export async function refuseWhileThrottled(event: H3Event, db: Queryable, userId: string): Promise<void> {
  const retryAfter = await secondFactorRetryAfter(db, userId)
  if (!retryAfter) return
  setResponseHeader(event, 'retry-after', retryAfter)
  throw tooManyAttempts(retryAfter)
}

const passkeyRefused = () => createError({ statusCode: 401, statusMessage: 'The passkey was not accepted', data: { code: 'invalid_passkey' } })

/**
 * Checks a second factor of the account (throttled: 5 failures in 5 minutes, then 429): a code of
 * an authenticator app, a recovery code (`recoveryCodes` allowed), or a passkey response to a
 * challenge of `purpose` bound to the session. Answers the method; failures are counted, logged
 * (as failed sign-ins when `logFailures`) and answered 400 `invalid_code` or 401 for a passkey.
 */
export async function proveSecondFactor(
  event: H3Event, db: Queryable, state: SessionState, body: z.output<typeof SecondFactorBody>,
  purpose: ChallengePurpose, options: { recoveryCodes: boolean, logFailures: boolean },
): Promise<SecurityMethod> {
  const userId = state.user.id
  await refuseWhileThrottled(event, db, userId)
  const fail = async (method: SecurityMethod) => {
    await recordSecondFactorFailure(db, userId)
    if (options.logFailures) await logSecurityEvent(db, event, userId, 'sign_in_failed', method)
  }
  if ('recovery_code' in body) {
    if (!options.recoveryCodes) throw createError({ statusCode: 400, statusMessage: 'Use one of your factors', data: { code: 'factor_required' } })
    if (await useRecoveryCode(db, userId, body.recovery_code)) return 'recovery_code'
    await fail('recovery_code')
    throw invalidCode()
  }
  if ('code' in body) {
    if (await checkTotpCode(db, userId, body.factor_id, body.code)) return 'totp'
    await fail('totp')
    throw invalidCode()
  }
  const factor = await findFactor(db, userId, body.factor_id)
  if (factor?.type !== 'passkey') throw factorNotFound()
  const binding: ChallengeBinding = { sessionId: state.sessionId }
  // the browser picks which of the account's passkeys answers (the page cannot know which one it
  // will be), so any passkey of this account is accepted; another account's is not
  if (await verifyAssertion(event, db, body.response, purpose, binding, { userId })) return 'passkey'
  await fail('passkey')
  throw passkeyRefused()
}

/**
 * Completes a factor's enrolment: the account's first factor raises the session to level 2 under a
 * new id, ends the account's other sessions and makes its recovery codes (answered once).
 */
export async function factorAdded(event: H3Event, db: Database, state: SessionState, method: 'totp' | 'passkey'): Promise<{ recovery_codes?: string[] }> {
  await logSecurityEvent(db, event, state.user.id, 'factor_added', method)
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from public.auth_factors where user_id = $1 and verified_at is not null', [state.user.id])
  if (rows[0]!.n !== 1) return {}
  const sessionId = await raiseSession(event, db, state, method, false)
  const { rowCount: ended } = await db.query('delete from public.user_sessions where user_id = $1 and id <> $2', [state.user.id, sessionId])
  if (ended) await logSecurityEvent(db, event, state.user.id, 'session_ended')
  const recoveryCodes = await replaceRecoveryCodes(db, state.user.id)
  await logSecurityEvent(db, event, state.user.id, 'recovery_codes_created')
  return { recovery_codes: recoveryCodes }
}

/**
 * Signs in with a passkey alone (discoverable credential, user verification: two factors in one):
 * the challenge of the browser's short-lived cookie; a refused assertion is 401 and counts
 * against the account it claims. Starts a level-2 session with sudo open.
 */
export async function signInWithPasskey(event: H3Event, db: Database, response: unknown): Promise<{ user: User }> {
  const binding = challengeCookie(event)
  if (!binding) throw createError({ statusCode: 401, statusMessage: 'Ask for passkey options first', data: { code: 'invalid_passkey' } })
  const owner = await passkeyOwner(db, response)
  if (owner) await refuseWhileThrottled(event, db, owner.userId)
  const verified = await verifyAssertion(event, db, response, 'sign_in', binding)
  deleteCookie(event, 'tws-webauthn', { path: '/api/auth' })
  if (!verified) {
    if (owner) {
      await recordSecondFactorFailure(db, owner.userId)
      await logSecurityEvent(db, event, owner.userId, 'sign_in_failed', 'passkey')
    }
    throw passkeyRefused()
  }
  const { rows } = await db.query<User>('select id, email, name from public.profiles where id = $1', [verified.userId])
  const user = rows[0]
  if (!user) throw passkeyRefused()
  // the current team of a new session: the oldest membership, as after a password sign-in
  const { rows: teams } = await db.query<{ team_id: string }>(
    `select m.team_id from public.team_members m join public.teams t on t.id = m.team_id
     where m.user_id = $1 order by m.created_at, t.name limit 1`,
    [user.id],
  )
  await beginSession(event, db, user, teams[0]?.team_id ?? null, { aal: 2, methods: ['passkey'], sudoSeconds: sudoWindowSeconds() })
  await logSecurityEvent(db, event, user.id, 'sign_in', 'passkey')
  return { user }
}
