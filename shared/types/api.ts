import type { Role } from '../permissions'
import type { ActivityAction, ActivitySource } from '../utils/schemas'

export interface TeamSummary {
  id: string
  name: string
  role: Role
}

export interface Me {
  user: { id: string, email: string, name: string }
  teams: TeamSummary[]
  current_team_id: string | null
  /** The session's assurance level: 1 (a password), 2 (a second factor or a passkey). */
  aal: 1 | 2
  /** Until when powerful actions are open without confirming again (null: closed). */
  sudo_until: string | null
  /** Whether the session still owes its second factor (only this answer and the second step answer then). */
  mfa_required: boolean
}

export interface Team {
  id: string
  name: string
  webhook_url: string | null
  /** Activity entries older than this many days are deleted; null keeps them forever. */
  activity_retention_days: number | null
  /** API log entries and usage older than this many days are deleted (1 to 90). */
  api_log_retention_days: number
  created_at: string
}

export interface Member {
  user_id: string
  name: string
  email: string
  role: Role
  created_at: string
}

export interface ActivityEntry {
  id: string
  team_id: string
  actor_id: string | null
  actor_name: string | null
  source: ActivitySource
  source_ref: string | null
  /** The API key that made a public API write, and its name (null once the key is gone). */
  api_key_id: string | null
  api_key_name: string | null
  /** The app connected by OAuth that made an MCP write (its grant is the source_ref); listed entries only. */
  client_name?: string | null
  table_name: string
  record_id: string | null
  /** The record's name or title (an e-mail, a member's name) as the entry recorded it. */
  record_title: string | null
  action: ActivityAction
  new_data: Record<string, unknown> | null
  old_data: Record<string, unknown> | null
  created_at: string
}

export interface ActivityPage {
  entries: ActivityEntry[]
  total: number
  /** Names of the ids the page's values refer to (people, projects, ...), by id. */
  names: Record<string, string>
}
