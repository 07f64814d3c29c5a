import { z } from 'zod'
import { can, tablePermission, type Role } from '../permissions'
import { apiKeyAccessLevels, type ApiKeyAccess, type ApiKeyScopes } from './api-keys'

const writeActions = ['create', 'update', 'delete'] as const

/** The write actions a role may take on a table's records (a member: create and update; an admin: delete too). */
export function roleWriteActions(role: Role | null | undefined, table: string): (typeof writeActions[number])[] {
  return writeActions.filter(action => can(role, tablePermission(table, action)))
}

/**
 * The most a role may let an agent do with a table: `write` when the role may write its records
 * at all (the grant's tools are then those of the actions the role may take, checked at each
 * call), else `read` when it may view them.
 */
export function roleTableAccess(role: Role | null | undefined, table: string): ApiKeyAccess | null {
  if (roleWriteActions(role, table).length) return 'write'
  return can(role, tablePermission(table, 'view')) ? 'read' : null
}

/** The scopes capped by what the role may do now (an entry above the role is lowered or dropped). */
export function capScopesByRole(scopes: ApiKeyScopes, role: Role | null | undefined): ApiKeyScopes {
  const capped: ApiKeyScopes = {}
  for (const [table, access] of Object.entries(scopes)) {
    const most = roleTableAccess(role, table)
    if (!most) continue
    capped[table] = access === 'write' && most === 'write' ? 'write' : 'read'
  }
  return capped
}

/** What the consent page offers for one table: its name and the most the user may grant. */
export interface ConsentTable {
  name: string
  most: ApiKeyAccess
  /** What writing means for this user here: the write actions the role allows. */
  write_actions: ('create' | 'update' | 'delete')[]
}

/** An authorization request as the consent page shows it. */
export interface ConsentRequest {
  id: string
  client_name: string
  client_id: string
  redirect_host: string
  /** Whether the client asked for writing (`mcp:write`); without it only read is offered. */
  may_write: boolean
  teams: { id: string, name: string, role: Role, tables: ConsentTable[] }[]
}

/** Body of POST /api/oauth/requests/{id}: approve with a team and per-table access, or deny. */
export const ConsentDecisionBody = z.discriminatedUnion('decision', [
  z.object({
    decision: z.literal('approve'),
    team_id: z.uuid({ error: 'must be a team id' }),
    access: z.record(z.string().max(63), z.enum([...apiKeyAccessLevels, 'none'], { error: 'must be "read", "write" or "none"' })),
  }),
  z.object({ decision: z.literal('deny') }),
])

/** Where the browser goes after a decision: the client's redirect URI with the code (or the error) and state. */
export interface ConsentAnswer {
  redirect_to: string
}

/** A connection of an agent, as the Connected apps page lists it. */
export interface OAuthGrant {
  id: string
  client_name: string
  team_id: string
  user_id: string
  user_name: string | null
  scopes: ApiKeyScopes
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}
