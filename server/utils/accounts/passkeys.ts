import type { H3Event } from 'h3'
import type { User } from '#auth-utils'
import type {
  AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON,
} from '@simplewebauthn/server'
import type { Queryable } from '../db/db-drivers'
import { storeChallenge, takeChallenge, type ChallengeBinding, type ChallengePurpose } from './challenges'
import { setting } from '../settings'

const rpName = 'Team Workspace'

// The WebAuthn library is loaded when a passkey is first used, not when the server starts: with its
// ASN.1 and X.509 libraries it is some 5 MB of heap (a started server's heap grew from 19 MB to
// 23 MB) that every process kept from its start, mostly one that only serves the public API, and
// that the collector walks again at each full collection.
let webAuthn: Promise<typeof import('@simplewebauthn/server')> | undefined
const loadWebAuthn = () => webAuthn ??= import('@simplewebauthn/server')

/** The relying party: the host of BASE_URL (else of the request) and the origin responses must come from. */
export function relyingParty(event: H3Event): { rpId: string, origin: string } {
  const base = setting('baseUrl')
  const url = base && URL.canParse(base) ? new URL(base) : getRequestURL(event, { xForwardedHost: true, xForwardedProto: true })
  return { rpId: url.hostname, origin: url.origin }
}

interface PasskeyRow {
  id: string
  user_id: string
  credential_id: string
  public_key: Uint8Array
  sign_count: string | number
  transports: string[]
}

/** Registration options for a new passkey of the account (its existing ones excluded); the challenge is kept for the session. */
export async function registrationOptions(event: H3Event, db: Queryable, user: User, sessionId: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rows } = await db.query<Pick<PasskeyRow, 'credential_id' | 'transports'>>(
    `select credential_id, transports from public.auth_factors where user_id = $1 and type = 'passkey' and verified_at is not null`,
    [user.id],
  )
  const { generateRegistrationOptions } = await loadWebAuthn()
  const options = await generateRegistrationOptions({
    rpName, rpID: relyingParty(event).rpId,
    userName: user.email, userDisplayName: user.name,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: rows.map(row => ({ id: row.credential_id, transports: row.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
  })
  await storeChallenge(db, options.challenge, 'register', { sessionId }, user.id)
  return options
}

/**
 * Verifies a registration response against the session's challenge, the origin and the RP ID,
 * with user verification required; answers the credential to store, or null (refused).
 */
export async function verifyRegistration(event: H3Event, db: Queryable, userId: string, sessionId: string, response: unknown): Promise<{ credentialId: string, publicKey: Uint8Array, counter: number, transports: string[] } | null> {
  const taken = await takeChallenge(db, response, 'register', { sessionId })
  if (!taken || taken.userId !== userId) return null
  const { rpId, origin } = relyingParty(event)
  const { verifyRegistrationResponse } = await loadWebAuthn()
  try {
    const result = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON, expectedChallenge: taken.challenge,
      expectedOrigin: origin, expectedRPID: rpId, requireUserVerification: true,
    })
    if (!result.verified) return null
    const { credential } = result.registrationInfo
    return { credentialId: credential.id, publicKey: credential.publicKey, counter: credential.counter, transports: credential.transports ?? [] }
  }
  catch {
    return null
  }
}

/** Request options for a passkey assertion: the account's passkeys (null: any discoverable credential); the challenge is kept for the binding. */
export async function authenticationOptions(event: H3Event, db: Queryable, purpose: ChallengePurpose, binding: ChallengeBinding, userId: string | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
  let allowCredentials: { id: string, transports?: string[] }[] | undefined
  if (userId) {
    const { rows } = await db.query<Pick<PasskeyRow, 'credential_id' | 'transports'>>(
      `select credential_id, transports from public.auth_factors where user_id = $1 and type = 'passkey' and verified_at is not null`,
      [userId],
    )
    allowCredentials = rows.map(row => ({ id: row.credential_id, transports: row.transports }))
  }
  const { generateAuthenticationOptions } = await loadWebAuthn()
  const options = await generateAuthenticationOptions({ rpID: relyingParty(event).rpId, userVerification: 'required', allowCredentials })
  await storeChallenge(db, options.challenge, purpose, binding, userId)
  return options
}

/** The account a passkey response claims to come from (its credential), or null. */
export async function passkeyOwner(db: Queryable, response: unknown): Promise<{ factorId: string, userId: string } | null> {
  const credentialId = (response as { id?: unknown })?.id
  if (typeof credentialId !== 'string' || credentialId.length > 1024) return null
  const { rows } = await db.query<{ id: string, user_id: string }>(
    `select id, user_id from public.auth_factors where credential_id = $1 and type = 'passkey' and verified_at is not null`,
    [credentialId],
  )
  return rows[0] ? { factorId: rows[0].id, userId: rows[0].user_id } : null
}

/**
 * Verifies a passkey assertion: its challenge (of this purpose and binding, used once), origin,
 * RP ID, user verification and signature counter (a counter that went backwards is refused).
 * `factorId`, when given, is the passkey the response must come from. Answers the passkey's
 * factor and account, or null (refused).
 */
export async function verifyAssertion(event: H3Event, db: Queryable, response: unknown, purpose: ChallengePurpose, binding: ChallengeBinding, expected: { userId?: string, factorId?: string } = {}): Promise<{ factorId: string, userId: string } | null> {
  const credentialId = (response as { id?: unknown })?.id
  if (typeof credentialId !== 'string' || credentialId.length > 1024) return null
  const taken = await takeChallenge(db, response, purpose, binding)
  if (!taken) return null
  const { rows } = await db.query<PasskeyRow>(
    `select id, user_id, credential_id, public_key, sign_count, transports
     from public.auth_factors where credential_id = $1 and type = 'passkey' and verified_at is not null`,
    [credentialId],
  )
  const passkey = rows[0]
  if (!passkey) return null
  if (taken.userId && taken.userId !== passkey.user_id) return null
  if (expected.userId && expected.userId !== passkey.user_id) return null
  if (expected.factorId && expected.factorId !== passkey.id) return null
  const { rpId, origin } = relyingParty(event)
  const counter = Number(passkey.sign_count)
  const { verifyAuthenticationResponse } = await loadWebAuthn()
  try {
    const result = await verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON, expectedChallenge: taken.challenge,
      expectedOrigin: origin, expectedRPID: rpId, requireUserVerification: true,
      credential: { id: passkey.credential_id, publicKey: new Uint8Array(passkey.public_key), counter, transports: passkey.transports },
    })
    if (!result.verified || !result.authenticationInfo.userVerified) return null
    // the counter moves forward only once (two assertions racing with one counter: one wins)
    const { rowCount } = await db.query(
      'update public.auth_factors set sign_count = $2, last_used_at = now() where id = $1 and sign_count = $3',
      [passkey.id, result.authenticationInfo.newCounter, counter],
    )
    if (!rowCount) return null
    return { factorId: passkey.id, userId: passkey.user_id }
  }
  catch {
    return null
  }
}
