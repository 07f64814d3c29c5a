import { hash, randomBytes } from 'node:crypto'
import type { H3Event } from 'h3'
import type { z } from 'zod'
import { apiKeyStatus, defaultApiKeyScopes, scopeAllows, webhooksScope, type ApiKey, type ApiKeyAccess, type ApiKeyScopes, type CreatedApiKey, type CreateApiKeyBody, type RevokedApiKey, type UpdateApiKeyBody } from '#shared/utils/api-keys'
import { createAuditedClient, requireActor, type AuditedClient } from '../db/audited-client'
import type { Database, Queryable } from '../db/db-drivers'
import { forgetCredential, resolveApiKey } from './principal'
import { noteApiCredential, noteUnknownApiCredential, sentCredential } from '../api-log/recorder'
import { countAddressRequest, enforceRateLimit, takeKeyRequest } from './rate-limits'
import { disableEndpointsOfKey } from '../webhooks/webhooks-endpoints'
import { domainTables } from '../records/table-registry'
import { requestHeader } from '../http/request'
import { useDb } from '../db/database'
import { logger } from '../log/logger'

const log = logger('api-keys')

/** The lowercase hex SHA-256 of a raw key, as stored in api_keys.key_hash. */
export function hashApiKey(rawKey: string): string {
  // the one-shot digest: every request with a key hashes it
  return hash('sha256', rawKey)
}

/** A new key: 32 random bytes, base64url (43 characters); prefix = first 8; hash = SHA-256 hex. */
export function generateApiKey(): { key: string, prefix: string, hash: string } {
  const key = randomBytes(32).toString('base64url')
  return { key, prefix: key.slice(0, 8), hash: hashApiKey(key) }
}

// rolled_to: the key whose rolled_from names this one (a key is rolled once: a roll needs an active key)
const keyColumns = `k.id, k.team_id, k.created_by, p.name as created_by_name, k.name, k.key_prefix,
  k.last_used_at, k.expires_at, k.revoked_at, k.created_at, k.scopes, k.rolled_from,
  (select r.id from public.api_keys r where r.rolled_from = k.id and r.team_id = k.team_id
   order by r.created_at limit 1) as rolled_to,
  (select count(*)::int from public.webhook_endpoints e
   where e.created_by_api_key_id = k.id and e.team_id = k.team_id and e.enabled) as webhook_endpoints`

/** The team's keys, newest first, with the creator's name; never the hash. */
export async function listApiKeys(client: AuditedClient, teamId: string): Promise<ApiKey[]> {
  const { rows } = await client.read<ApiKey>(
    `select ${keyColumns} from public.api_keys k left join public.profiles p on p.id = k.created_by
     where k.team_id = $1 order by k.created_at desc, k.id desc`,
    [teamId],
  )
  return rows
}

/** The scopes, after checking that each names "*", `webhooks` or a table of the public API; 400 naming the first that does not. */
async function checkedScopes(scopes: ApiKeyScopes | undefined): Promise<ApiKeyScopes> {
  if (!scopes) return defaultApiKeyScopes
  const tables = new Set((await domainTables()).map(table => table.name))
  const unknown = Object.keys(scopes).find(name => name !== '*' && name !== webhooksScope && !tables.has(name))
  if (unknown !== undefined) throw createError({ statusCode: 400, statusMessage: `scopes.${unknown.slice(0, 63)}: is not a table of the public API` })
  return scopes
}

/** Inserts a key row and answers it with the creator's name and the raw key (shown this once). */
async function insertApiKey(client: Queryable, teamId: string, actorId: string, fields: { name: string, scopes: ApiKeyScopes, expires_at: string | null, rolled_from?: string }): Promise<CreatedApiKey> {
  const { key, prefix, hash } = generateApiKey()
  const { rows } = await client.query<ApiKey>(
    `with k as (
       insert into public.api_keys (team_id, name, key_prefix, key_hash, created_by, expires_at, scopes, rolled_from)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning *
     )
     select ${keyColumns} from k left join public.profiles p on p.id = k.created_by`,
    [teamId, fields.name, prefix, hash, actorId, fields.expires_at, JSON.stringify(fields.scopes), fields.rolled_from ?? null],
  )
  return { ...rows[0]!, key }
}

/** Creates a key for the team, made by the client's actor; the raw key is in this answer only. */
export async function createApiKey(client: AuditedClient, teamId: string, input: z.output<typeof CreateApiKeyBody>): Promise<CreatedApiKey> {
  const scopes = await checkedScopes(input.scopes)
  return client.transaction(tx => insertApiKey(tx, teamId, requireActor(client), { name: input.name, scopes, expires_at: input.expires_at ?? null }))
}

/**
 * Rolls a key of the team: a new key with the same name, scopes and expiry, while the old one
 * keeps working for `overlapSeconds` more (0: it stops now). 404 for a key of another team,
 * 409 for a revoked or expired one. Both changes are one transaction.
 */
export async function rollApiKey(client: AuditedClient, teamId: string, keyId: string, overlapSeconds: number): Promise<CreatedApiKey> {
  const rolled = await client.transaction(async (tx) => {
    const old = await lockActiveKey(tx, teamId, keyId, status => `This API key is ${status}; create a new one instead`)
    // one replacement per key, so that rolled_from and rolled_to name a single chain
    const replaced = await tx.query('select 1 from public.api_keys where rolled_from = $1 and team_id = $2', [keyId, teamId])
    if (replaced.rowCount) throw createError({ statusCode: 409, statusMessage: 'This API key was already rolled; roll its replacement instead' })
    await tx.query(
      `update public.api_keys set expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => $3))
       where id = $1 and team_id = $2`,
      [keyId, teamId, overlapSeconds],
    )
    return insertApiKey(tx, teamId, requireActor(client), { name: old.name, scopes: old.scopes, expires_at: old.expires_at, rolled_from: old.id })
  })
  // committed: this instance forgets the old key's entry before it answers (the others on notification)
  forgetCredential(keyId)
  return rolled
}

/** The team's key `keyId`, locked for the transaction; 404 for a key of another team, 409 unless it is active. */
async function lockActiveKey(tx: Queryable, teamId: string, keyId: string, refusal: (status: string) => string): Promise<ApiKeyRow> {
  const { rows } = await tx.query<ApiKeyRow>('select * from public.api_keys where id = $1 and team_id = $2 for update', [keyId, teamId])
  const found = rows[0]
  if (!found) throw createError({ statusCode: 404, statusMessage: 'API key not found' })
  const status = apiKeyStatus(found)
  if (status !== 'active') throw createError({ statusCode: 409, statusMessage: refusal(status) })
  return found
}

/**
 * Changes an active key's name, scopes or expiry (each only when given; `expires_at` null: never).
 * 404 for a key of another team, 409 for a revoked or expired one. The change is in the activity
 * log (the audited client), and every instance forgets the key (the api_keys trigger notifies), so
 * new scopes and expiry hold within the key bounds.
 */
export async function updateApiKey(client: AuditedClient, teamId: string, keyId: string, input: z.output<typeof UpdateApiKeyBody>): Promise<ApiKey> {
  const scopes = input.scopes === undefined ? undefined : await checkedScopes(input.scopes)
  const updated = await client.transaction(async (tx) => {
    await lockActiveKey(tx, teamId, keyId, status => `This API key is ${status}; it can no longer be changed`)
    const { rows } = await tx.query<ApiKey>(
      `with k as (
         update public.api_keys
         set name = coalesce($3, name),
             scopes = coalesce($4::jsonb, scopes),
             expires_at = case when $5 then $6::timestamptz else expires_at end
         where id = $1 and team_id = $2 returning *
       )
       select ${keyColumns} from k left join public.profiles p on p.id = k.created_by`,
      [keyId, teamId, input.name ?? null, scopes ? JSON.stringify(scopes) : null, input.expires_at !== undefined, input.expires_at ?? null],
    )
    return rows[0]!
  })
  // committed: this instance forgets the key before it answers (the others on notification)
  forgetCredential(keyId)
  return updated
}

/**
 * Revokes a key of the team: 404 for a key of another team, 409 when it is already revoked. The
 * webhook endpoints the key made are disabled in the same transaction; the answer counts them.
 */
export async function revokeApiKey(client: AuditedClient, teamId: string, keyId: string): Promise<RevokedApiKey> {
  const revoked = await client.transaction(async (tx) => {
    const { rows } = await tx.query<ApiKey>(
      `with k as (
         update public.api_keys set revoked_at = now()
         where id = $1 and team_id = $2 and revoked_at is null returning *
       )
       select ${keyColumns} from k left join public.profiles p on p.id = k.created_by`,
      [keyId, teamId],
    )
    const apiKey = rows[0]
    if (apiKey) return { ...apiKey, disabled_endpoints: await disableEndpointsOfKey(tx, teamId, apiKey.id, `the API key "${apiKey.name}" that created it was revoked`) }
    const existing = await tx.query('select 1 from public.api_keys where id = $1 and team_id = $2', [keyId, teamId])
    if (existing.rowCount) throw createError({ statusCode: 409, statusMessage: 'This API key is already revoked' })
    throw createError({ statusCode: 404, statusMessage: 'API key not found' })
  })
  // committed: this instance forgets the key before it answers (the others on notification)
  forgetCredential(keyId)
  return revoked
}

/** The full api_keys row (key_hash included). */
export interface ApiKeyRow extends Omit<ApiKey, 'created_by_name' | 'rolled_to' | 'webhook_endpoints'> {
  key_hash: string
}

const touchInterval = 60_000
const lastTouched = new Map<string, number>()

/** What a request needs of its key: who it acts for, in which team, with which scopes. */
export type AuthenticatedKey = Pick<ApiKeyRow, 'id' | 'team_id' | 'created_by' | 'scopes'>

/**
 * Records that a key was used, at most once a minute per key (here and, through the where clause,
 * across app instances), off the response path; a failure is logged and never reaches the request.
 * `recentlyUsed`: the key's look-up found last_used_at within the last minute.
 */
function touchApiKey(db: Database, apiKey: AuthenticatedKey, recentlyUsed: boolean) {
  const now = Date.now()
  if (now - (lastTouched.get(apiKey.id) ?? 0) < touchInterval) return
  lastTouched.set(apiKey.id, now)
  if (recentlyUsed) return
  const client = createAuditedClient(db, { actorId: apiKey.created_by, teamId: apiKey.team_id, source: 'api' })
  client.query(
    `update public.api_keys set last_used_at = now()
     where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
    [apiKey.id],
  ).catch(error => log.error('Could not record last_used_at for a key', { apiKeyId: apiKey.id, error }))
}

/** The condition that the api_keys row `alias` is neither revoked nor expired. */
export const keyIsValidSql = (alias: string) => `${alias}.revoked_at is null and (${alias}.expires_at is null or ${alias}.expires_at > now())`

const unauthorized = (message: string, code?: string) => createError({ statusCode: 401, statusMessage: message, data: code ? { code } : undefined })

/** Why a request whose two credential headers disagree is refused (supabase-js sends the same key in both). */
export const conflictingCredentials = 'The Authorization header and the apikey header carry different credentials: send one, or the same key in both'

/**
 * Authenticates a public API request by its bearer key: 401 when the header is missing or
 * malformed, or the key is unknown, revoked or expired, or its creator is refused by the team's
 * two-factor policy (`code: "two_factor_required"`); 429 over the key's rate limit. The key becomes
 * a principal in the credential pipeline (server/utils/credentials/principal.ts, which says how
 * long it is served from memory); its request is counted from the key's leased block
 * (server/utils/credentials/rate-limits.ts). Returns the key and an audited client (source `api`, actor the
 * key's creator, team the key's team).
 */
export async function authApiKey(event: H3Event): Promise<{ apiKey: AuthenticatedKey, client: AuditedClient }> {
  const { token, isConflicting } = sentCredential(requestHeader(event, 'authorization'), requestHeader(event, 'apikey'))
  const db = await useDb()
  // a request without a valid key counts against its address
  const refuse = async (message: string, code?: string) => {
    enforceRateLimit(event, await countAddressRequest(db, event), 'this address')
    return unauthorized(message, code)
  }
  if (isConflicting) throw await refuse(conflictingCredentials, 'conflicting_credentials')
  if (!token) throw await refuse('Send the API key as "Authorization: Bearer <key>" (or in an "apikey" header)')
  const resolved = await resolveApiKey(db, hashApiKey(token))
  // a known key's requests are in its team's API log, refused ones included
  if (resolved.known) noteApiCredential(event, { teamId: resolved.known.team_id, apiKeyId: resolved.known.id })
  else noteUnknownApiCredential(event)
  if (!resolved.principal) throw await refuse(resolved.refusal, resolved.code)
  const { principal } = resolved
  const apiKey: AuthenticatedKey = { id: principal.id, team_id: principal.teamId, created_by: principal.actorId, scopes: principal.scopes }
  enforceRateLimit(event, await takeKeyRequest(db, apiKey.id), 'this API key')
  touchApiKey(db, apiKey, resolved.recentlyUsed)
  const client = createAuditedClient(db, { actorId: apiKey.created_by, teamId: apiKey.team_id, source: 'api', apiKeyId: apiKey.id })
  return { apiKey, client }
}

/** 403 unless the key's scopes give it `needed` access to the table, naming the table and the access. */
export function requireKeyAccess(apiKey: Pick<ApiKeyRow, 'scopes'>, table: string, needed: ApiKeyAccess): void {
  if (scopeAllows(apiKey.scopes, table, needed)) return
  throw createError({ statusCode: 403, statusMessage: `This API key may not ${needed} ${table} (its scopes lack ${needed} access to it)` })
}
