/** The answers of the account's security routes and of a team's two-factor policy, as the pages read them. */

export type FactorType = 'totp' | 'passkey'

export interface Factor {
  id: string
  type: FactorType
  name: string
  created_at: string
  last_used_at: string | null
}

export interface FactorList {
  factors: Factor[]
  recovery_codes_remaining: number
}

/** A factor as the sign-in's second step names it. */
export type FactorChoice = Pick<Factor, 'id' | 'type' | 'name'>

export interface TotpEnrolment {
  id: string
  secret: string
  uri: string
  qr_svg: string
  expires_at: string
}

export interface AccountSession {
  id: string
  current: boolean
  aal: 1 | 2
  created_at: string
  last_seen_at: string
  ip: string | null
  user_agent: string | null
}

export type SecurityEvent = 'sign_in' | 'sign_in_failed' | 'factor_added' | 'factor_removed' | 'recovery_codes_created'
  | 'recovery_code_used' | 'reauth' | 'session_ended'
export type SecurityMethod = 'password' | 'totp' | 'passkey' | 'recovery_code'

export interface SecurityLogEntry {
  id: string
  at: string
  event: SecurityEvent
  method: SecurityMethod | null
  ip: string | null
  user_agent: string | null
}

export interface SecurityLogPage {
  entries: SecurityLogEntry[]
  next_cursor: string | null
}

export type { SecurityPolicy, TwoFactorRequirement } from '#shared/utils/security-policy'

/** How a person may prove who they are again (the `methods` of a `reauth_required` answer). */
export type ReauthMethod = 'password' | 'totp' | 'passkey'
