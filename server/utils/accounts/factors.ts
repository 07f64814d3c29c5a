import type { User } from '#auth-utils'
import type { Queryable } from '../db/db-drivers'
import { matchingStep, newTotpSecret, openTotpSecret, sealTotpSecret } from './totp'
import { deleteRecoveryCodes, recoveryCodesRemaining } from './recovery-codes'
import type { Factor } from '#shared/types/security'

export type { Factor }

/** An authenticator app waits this long for its first code; afterwards the enrolment is gone. */
const enrolmentMinutes = 10
/** Failed second-factor attempts allowed per account in the throttling window. */
const maxFailures = 5
const failureWindowSeconds = 300

const factorColumns = 'id, type, name, created_at, last_used_at'

export const factorNotFound = () => createError({ statusCode: 404, statusMessage: 'Factor not found', data: { code: 'not_found' } })
export const invalidCode = () => createError({ statusCode: 400, statusMessage: 'This code is wrong, expired or already used', data: { code: 'invalid_code' } })

/** The account's verified factors and how many recovery codes are left. */
export async function listFactors(db: Queryable, userId: string): Promise<{ factors: Factor[], recovery_codes_remaining: number }> {
  const { rows } = await db.query<Factor>(
    `select ${factorColumns} from public.auth_factors where user_id = $1 and verified_at is not null order by created_at, id`,
    [userId],
  )
  return { factors: rows, recovery_codes_remaining: await recoveryCodesRemaining(db, userId) }
}

/** Whether the account has a verified factor. */
export async function hasFactor(db: Queryable, userId: string): Promise<boolean> {
  const { rowCount } = await db.query('select 1 from public.auth_factors where user_id = $1 and verified_at is not null limit 1', [userId])
  return rowCount > 0
}

/** Starts an authenticator-app enrolment: a new secret (shown this once), unverified until its first code, for 10 minutes. */
export async function startTotpEnrolment(db: Queryable, user: User, name: string | undefined): Promise<{ id: string, secret: string, uri: string, qr_svg: string, expires_at: string }> {
  await db.query(
    `delete from public.auth_factors where user_id = $1 and verified_at is null and created_at < now() - make_interval(mins => $2)`,
    [user.id, enrolmentMinutes],
  )
  const { secret, uri, qrSvg } = newTotpSecret(user.email)
  const { sealed, keyId } = sealTotpSecret(secret)
  const { rows } = await db.query<{ id: string, expires_at: string }>(
    `insert into public.auth_factors (user_id, type, name, totp_secret, totp_key_id)
     values ($1, 'totp', $2, $3, $4)
     returning id, created_at + make_interval(mins => $5) as expires_at`,
    [user.id, name ?? 'Authenticator app', sealed, keyId, enrolmentMinutes],
  )
  return { id: rows[0]!.id, secret, uri, qr_svg: qrSvg, expires_at: rows[0]!.expires_at }
}

/**
 * Accepts a code of an authenticator app: the factor's secret, one step either side, and a step
 * after the last one accepted (a code works once). `pending` is an enrolment (unverified, at most
 * 10 minutes old), which this code verifies. False for a wrong, replayed or expired code.
 */
async function acceptCode(db: Queryable, userId: string, factorId: string, code: string, pending: boolean): Promise<boolean | null> {
  const { rows } = await db.query<{ totp_secret: string, totp_key_id: string }>(
    `select totp_secret, totp_key_id from public.auth_factors
     where id = $1 and user_id = $2 and type = 'totp'
       and ${pending ? `verified_at is null and created_at > now() - make_interval(mins => ${enrolmentMinutes})` : 'verified_at is not null'}`,
    [factorId, userId],
  )
  const factor = rows[0]
  if (!factor) return null
  const secret = openTotpSecret(factor.totp_secret, factor.totp_key_id)
  const step = secret ? matchingStep(secret, code) : null
  if (step === null) return false
  // one statement decides, so that two requests racing with one code cannot both pass
  const { rowCount } = await db.query(
    `update public.auth_factors
     set totp_last_step = $3, last_used_at = now()${pending ? ', verified_at = now()' : ''}
     where id = $1 and user_id = $2 and (totp_last_step is null or totp_last_step < $3)`,
    [factorId, userId, step],
  )
  return rowCount > 0
}

/** Verifies an enrolment with its first code; 404 when unknown or expired, 400 `invalid_code` when wrong. */
export async function confirmTotpEnrolment(db: Queryable, userId: string, factorId: string, code: string): Promise<Factor> {
  const accepted = await acceptCode(db, userId, factorId, code, true)
  if (accepted === null) throw createError({ statusCode: 404, statusMessage: 'This enrolment does not exist or has expired; start again', data: { code: 'not_found' } })
  if (!accepted) throw invalidCode()
  return (await findFactor(db, userId, factorId))!
}

/** Checks a code of one of the account's verified authenticator apps; 404 for a factor that is not theirs. */
export async function checkTotpCode(db: Queryable, userId: string, factorId: string, code: string): Promise<boolean> {
  const accepted = await acceptCode(db, userId, factorId, code, false)
  if (accepted === null) throw factorNotFound()
  return accepted
}

/** Stores a verified passkey of the account. */
export async function addPasskey(db: Queryable, userId: string, credential: { credentialId: string, publicKey: Uint8Array, counter: number, transports: string[] }, name: string | undefined): Promise<Factor> {
  const { rows } = await db.query<Factor>(
    `insert into public.auth_factors (user_id, type, name, verified_at, credential_id, public_key, sign_count, transports)
     values ($1, 'passkey', $2, now(), $3, $4, $5, $6)
     on conflict (credential_id) where credential_id is not null do nothing
     returning ${factorColumns}`,
    [userId, name ?? 'Passkey', credential.credentialId, Buffer.from(credential.publicKey), credential.counter, credential.transports],
  )
  if (!rows[0]) throw createError({ statusCode: 409, statusMessage: 'This passkey is already registered', data: { code: 'conflict' } })
  return rows[0]
}

/** One verified factor of the account, or null (another account's factor reads as none). */
export async function findFactor(db: Queryable, userId: string, factorId: string): Promise<Factor | null> {
  const { rows } = await db.query<Factor>(
    `select ${factorColumns} from public.auth_factors where id = $1 and user_id = $2 and verified_at is not null`,
    [factorId, userId],
  )
  return rows[0] ?? null
}

export async function renameFactor(db: Queryable, userId: string, factorId: string, name: string): Promise<Factor> {
  const { rows } = await db.query<Factor>(
    `update public.auth_factors set name = $3 where id = $1 and user_id = $2 and verified_at is not null returning ${factorColumns}`,
    [factorId, userId, name],
  )
  if (!rows[0]) throw factorNotFound()
  return rows[0]
}

/**
 * Whether a team of the account requires a second factor of it: a policy of `everyone`, or of
 * `admins` where the account is an owner or an admin.
 */
export async function teamRequiresTwoFactor(db: Queryable, userId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `select 1 from public.team_members m join public.teams t on t.id = m.team_id
     where m.user_id = $1
       and (t.require_two_factor = 'everyone' or (t.require_two_factor = 'admins' and m.role in ('owner', 'admin')))
     limit 1`,
    [userId],
  )
  return rowCount > 0
}

/**
 * Removes a factor: 404 when it is not the account's, 409 `factor_required_by_team` when it is the
 * last one and a team requires two factors. The last factor takes the recovery codes with it.
 */
export async function removeFactor(db: Queryable, userId: string, factorId: string): Promise<Factor> {
  const { rows } = await db.query<Factor & { others: number }>(
    `select ${factorColumns.split(', ').map(column => `f.${column}`).join(', ')},
            (select count(*)::int from public.auth_factors o where o.user_id = f.user_id and o.verified_at is not null and o.id <> f.id) as others
     from public.auth_factors f where f.id = $1 and f.user_id = $2 and f.verified_at is not null
     for update`,
    [factorId, userId],
  )
  const factor = rows[0]
  if (!factor) throw factorNotFound()
  if (factor.others === 0 && await teamRequiresTwoFactor(db, userId)) {
    throw createError({ statusCode: 409, statusMessage: 'A team of yours requires a second factor: add another before removing this one', data: { code: 'factor_required_by_team' } })
  }
  await db.query('delete from public.auth_factors where id = $1 and user_id = $2', [factorId, userId])
  if (factor.others === 0) await deleteRecoveryCodes(db, userId)
  const { others: _, ...removed } = factor
  return removed
}

/** The factors a sign-in may continue with. */
export async function signInFactors(db: Queryable, userId: string): Promise<Pick<Factor, 'id' | 'type' | 'name'>[]> {
  const { rows } = await db.query<Pick<Factor, 'id' | 'type' | 'name'>>(
    'select id, type, name from public.auth_factors where user_id = $1 and verified_at is not null order by created_at, id',
    [userId],
  )
  return rows
}

/** Seconds until the account may try a second factor again after 5 failures in 5 minutes, else 0. */
export async function secondFactorRetryAfter(db: Queryable, userId: string): Promise<number> {
  const { rows } = await db.query<{ n: number, retry_after: number | null }>(
    `select count(*)::int as n,
            ceil(extract(epoch from (min(at) + make_interval(secs => $2) - now())))::int as retry_after
     from (select at from public.mfa_attempts where user_id = $1 and at > now() - make_interval(secs => $2) order by at desc limit $3) recent`,
    [userId, failureWindowSeconds, maxFailures],
  )
  const { n, retry_after } = rows[0]!
  return n >= maxFailures ? Math.max(1, retry_after ?? 1) : 0
}

/** Counts a failed second-factor attempt of the account. */
export async function recordSecondFactorFailure(db: Queryable, userId: string): Promise<void> {
  await db.query('delete from public.mfa_attempts where user_id = $1 and at < now() - make_interval(secs => $2)', [userId, failureWindowSeconds])
  await db.query('insert into public.mfa_attempts (user_id) values ($1)', [userId])
}

/** 429 with Retry-After while the account's second factors are throttled. */
export function tooManyAttempts(retryAfter: number) {
  return createError({ statusCode: 429, statusMessage: `Too many failed attempts; try again in ${Math.ceil(retryAfter / 60)} minute(s)`, data: { code: 'rate_limited' } })
}
