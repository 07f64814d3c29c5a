import { Secret, TOTP } from 'otpauth'
import type { TestApp } from './app'
import { Client, type Answer } from './http'

/** The code an authenticator app shows for `secret`, `stepsAhead` 30-second steps from now (RFC 6238, computed here). */
export function totpCode(secret: string, stepsAhead = 0): string {
  return new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + stepsAhead * 30_000 })
}

export interface EnrolledTotp {
  factorId: string
  secret: string
  recoveryCodes: string[]
  enrolment: Answer
  verification: Answer
}

/** Enrols an authenticator app for the client's account through the API, as a person with the app would. */
export async function enrolTotp(client: Client, name?: string): Promise<EnrolledTotp> {
  const enrolment = await client.post('/api/auth/factors/totp', name ? { name } : {})
  if (enrolment.status !== 201) throw new Error(`TOTP enrolment failed: ${enrolment.status} ${JSON.stringify(enrolment.body)}`)
  const { id, secret } = enrolment.body
  const verification = await client.post(`/api/auth/factors/totp/${id}/verify`, { code: totpCode(secret) })
  if (verification.status !== 200) throw new Error(`TOTP verification failed: ${verification.status} ${JSON.stringify(verification.body)}`)
  return { factorId: id, secret, recoveryCodes: verification.body.recovery_codes ?? [], enrolment, verification }
}

/** Signs in with the password only: the client holds a level-1 session (waiting for the second factor when the account has one). */
export async function signInPassword(app: Pick<TestApp, 'url'>, email: string, password: string): Promise<{ client: Client, answer: Answer }> {
  const client = new Client(app)
  const answer = await client.post('/api/auth/login', { email, password })
  return { client, answer }
}
