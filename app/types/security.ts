/** The answers of the account's security routes and of a team's two-factor policy, as the pages read them. */

import type { Factor } from '#shared/types/security'

export type { AccountSession, Factor, FactorType, SecurityEvent, SecurityLogEntry, SecurityMethod } from '#shared/types/security'

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

export interface SecurityLogPage {
  entries: SecurityLogEntry[]
  next_cursor: string | null
}

export type { SecurityPolicy, TwoFactorRequirement } from '#shared/utils/security-policy'

/** How a person may prove who they are again (the `methods` of a `reauth_required` answer). */
export type ReauthMethod = 'password' | 'totp' | 'passkey'
