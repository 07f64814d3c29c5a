import type { z } from 'zod'
import { roleTableAccess, type ConsentAnswer, type ConsentDecisionBody, type ConsentRequest, type OAuthGrant } from '#shared/utils/oauth'
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import type { Role } from '#shared/permissions'
import type { AuditedClient } from '../db/audited-client'
import { hashSecret, newSecret } from './config'
import { redirectHost } from './redirect-uris'
import { forgetGrant } from './token-cache'
import { useDb } from '../db/database'
import { domainTables } from '../records/table-registry'

interface RequestRow {
  id: string
  client_id: string
  client_name: string
  redirect_uri: string
  state: string | null
  scopes: string[]
  resource: string | null
  code_challenge: string
}

const requestGone = () => createError({ statusCode: 404, statusMessage: 'This authorization request has expired or was already answered; start the connection again from your agent' })

const requestSql = `select r.id, r.client_id, c.client_name, r.redirect_uri, r.state, r.scopes, r.resource, r.code_challenge
  from public.oauth_requests r join public.oauth_clients c on c.client_id = r.client_id
  where r.id = $1 and r.expires_at > now()`

/** The client's redirect URI with these parameters added (state when the request had one). */
function redirectWith(request: RequestRow, params: Record<string, string>): string {
  const url = new URL(request.redirect_uri)
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  if (request.state !== null) url.searchParams.set('state', request.state)
  return url.href
}

/** The user's teams with, per domain table, the most the user may let the agent do there. */
async function consentTeams(userId: string, mayWrite: boolean): Promise<ConsentRequest['teams']> {
  const db = await useDb()
  const { rows } = await db.query<{ id: string, name: string, role: Role }>(
    `select t.id, t.name, m.role from public.team_members m join public.teams t on t.id = m.team_id
     where m.user_id = $1 order by t.name, t.id`,
    [userId],
  )
  const tables = (await domainTables()).map(table => table.name)
  return rows.map(team => ({
    ...team,
    tables: tables.flatMap((name) => {
      const most = roleTableAccess(team.role, name)
      return most ? [{ name, most: mayWrite ? most : 'read' as const }] : []
    }),
  }))
}

/** An authorization request as the consent page shows it to the signed-in user; 404 when expired or answered. */
export async function consentRequest(userId: string, requestId: string): Promise<ConsentRequest> {
  const db = await useDb()
  const { rows } = await db.query<RequestRow>(requestSql, [requestId])
  const request = rows[0]
  if (!request) throw requestGone()
  const mayWrite = request.scopes.includes('mcp:write')
  return {
    id: request.id,
    client_name: request.client_name,
    client_id: request.client_id,
    redirect_host: redirectHost(request.redirect_uri),
    may_write: mayWrite,
    teams: await consentTeams(userId, mayWrite),
  }
}

/**
 * The user's answer to an authorization request. Deny: back to the client with
 * error=access_denied. Approve: the team must be one of the user's, each table's access at most
 * what the role allows there (and read only when the client asked for mcp:read alone), at least
 * one table; then a code (60 s, single use) goes back to the client. The request is answered once.
 */
export async function decideConsent(userId: string, requestId: string, decision: z.output<typeof ConsentDecisionBody>): Promise<ConsentAnswer> {
  const db = await useDb()
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<RequestRow>(`${requestSql} for update of r`, [requestId])
    const request = rows[0]
    if (!request) throw requestGone()
    if (decision.decision === 'deny') {
      await tx.query('delete from public.oauth_requests where id = $1', [requestId])
      return { redirect_to: redirectWith(request, { error: 'access_denied', error_description: 'The user denied the connection' }) }
    }
    const { rows: members } = await tx.query<{ role: Role }>(
      'select role from public.team_members where team_id = $1 and user_id = $2', [decision.team_id, userId])
    const role = members[0]?.role
    if (!role) throw createError({ statusCode: 404, statusMessage: 'Team not found' })
    const tables = new Set((await domainTables()).map(table => table.name))
    const mayWrite = request.scopes.includes('mcp:write')
    const scopes: ApiKeyScopes = {}
    for (const [table, access] of Object.entries(decision.access)) {
      if (!tables.has(table)) throw createError({ statusCode: 400, statusMessage: `access.${table.slice(0, 63)}: is not a table of this workspace` })
      if (access === 'none') continue
      const most = roleTableAccess(role, table)
      if (!most || (access === 'write' && most !== 'write')) {
        throw createError({ statusCode: 403, statusMessage: `Your role (${role}) may not let an agent ${access} ${table}` })
      }
      if (access === 'write' && !mayWrite) throw createError({ statusCode: 400, statusMessage: `access.${table}: the app asked to read only (mcp:read), so it may not be given write access` })
      scopes[table] = access
    }
    if (!Object.keys(scopes).length) throw createError({ statusCode: 400, statusMessage: 'access: give the app read or write access to at least one table, or deny' })
    const code = newSecret('code')
    await tx.query('delete from public.oauth_requests where id = $1', [requestId])
    await tx.query(
      `insert into public.oauth_codes (code_hash, client_id, team_id, user_id, scopes, redirect_uri, code_challenge, resource)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [hashSecret(code), request.client_id, decision.team_id, userId, JSON.stringify(scopes), request.redirect_uri, request.code_challenge, request.resource],
    )
    return { redirect_to: redirectWith(request, { code }) }
  })
}

const grantColumns = `g.id, g.client_name, g.team_id, g.user_id, p.name as user_name, g.scopes,
  g.created_at, g.last_used_at, g.revoked_at`

/** The team's grants, newest first: all of them when `everyone`, else only the user's own. */
export async function listGrants(client: AuditedClient, teamId: string, userId: string, everyone: boolean): Promise<OAuthGrant[]> {
  const { rows } = await client.read<OAuthGrant>(
    `select ${grantColumns} from public.oauth_grants g left join public.profiles p on p.id = g.user_id
     where g.team_id = $1 and ($3 or g.user_id = $2)
     order by g.created_at desc, g.id desc`,
    [teamId, userId, everyone],
  )
  return rows
}

/**
 * Revokes a grant of the team: one's own, or anyone's when `anyone` (api_keys.revoke). 404 for a
 * grant of another team (or another user's without the permission), 409 when already revoked.
 * This instance forgets its tokens before it answers; the others on notification.
 */
export async function revokeGrant(client: AuditedClient, teamId: string, grantId: string, userId: string, anyone: boolean): Promise<OAuthGrant> {
  const revoked = await client.transaction(async (tx) => {
    const { rows } = await tx.query<OAuthGrant>(
      `with g as (
         update public.oauth_grants set revoked_at = now()
         where id = $1 and team_id = $2 and ($4 or user_id = $3) and revoked_at is null returning *
       )
       select ${grantColumns} from g left join public.profiles p on p.id = g.user_id`,
      [grantId, teamId, userId, anyone],
    )
    if (rows[0]) return rows[0]
    const existing = await tx.query('select 1 from public.oauth_grants where id = $1 and team_id = $2 and ($4 or user_id = $3)', [grantId, teamId, userId, anyone])
    if (existing.rowCount) throw createError({ statusCode: 409, statusMessage: 'This connection is already revoked' })
    throw createError({ statusCode: 404, statusMessage: 'Connection not found' })
  })
  forgetGrant(grantId)
  return revoked
}
