import type { Role } from '../permissions'

export interface TeamSummary {
  id: string
  name: string
  role: Role
}

export interface Me {
  user: { id: string, email: string, name: string }
  teams: TeamSummary[]
  current_team_id: string | null
}

export interface Team {
  id: string
  name: string
  webhook_url: string | null
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
  source: 'web' | 'api' | 'chat' | 'system'
  source_ref: string | null
  table_name: string
  record_id: string | null
  action: 'insert' | 'update' | 'delete'
  new_data: Record<string, unknown> | null
  old_data: Record<string, unknown> | null
  created_at: string
}

export interface ActivityPage {
  entries: ActivityEntry[]
  total: number
}
