/** The account's second factors, sessions and security log, as the server answers them and the pages read them. */

export type FactorType = 'totp' | 'passkey'

export interface Factor {
  id: string
  type: FactorType
  name: string
  created_at: string
  last_used_at: string | null
}

/** One of the account's live sessions; `current`: the request's own. */
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
