import type { Role } from '../permissions'

/** The answer to creating an invitation. */
export interface CreatedInvitation {
  id: string
  email: string
  role: Role
  created_at: string
  expires_at: string
  invite_url: string
}

/** A pending invitation as the team's owners and admins see it; invite_url is null when the link cannot be recovered. */
export interface PendingInvitation {
  id: string
  email: string
  role: Role
  created_at: string
  expires_at: string
  invited_by_name: string | null
  invite_url: string | null
}

/** What anyone holding the token sees before accepting. */
export interface InvitationPreview {
  team_name: string
  email: string
  role: Role
  expires_at: string
}

export interface WebhookDeliverySummary {
  id: string
  event: string
  status: 'pending' | 'delivering' | 'succeeded' | 'failed'
  attempts: number
  last_status_code: number | null
  last_error: string | null
  next_attempt_at: string | null
  created_at: string
}
