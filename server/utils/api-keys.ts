import { createHash, randomBytes } from 'node:crypto'
import type { H3Event } from 'h3'
import type { z } from 'zod'
import type { ApiKey, CreatedApiKey, CreateApiKeyBody } from '#shared/utils/api-keys'
import { createAuditedClient, type AuditedClient } from './audited-client'
import type { Database } from './db-drivers'

/** The lowercase hex SHA-256 of a raw key, as stored in api_keys.key_hash. */
export function hashApiKey(rawKey: string): string {
  return createHash('sha256').update(rawKey).digest('hex')
}

/** A new key: 32 random bytes, base64url (43 characters); prefix = first 8; hash = SHA-256 hex. */
export function generateApiKey(): { key: string, prefix: string, hash: string } {
  const key = randomBytes(32).toString('base64url')
  return { key, prefix: key.slice(0, 8), hash: hashApiKey(key) }
}

const keyColumns = `k.id, k.team_id, k.created_by, p.name as created_by_name, k.name, k.key_prefix,
  k.last_used_at, k.expires_at, k.revoked_at, k.created_at`

/** The team's keys, newest first, with the creator's name; never the hash. */
export async function listApiKeys(client: AuditedClient, teamId: string): Promise<ApiKey[]> {
  const { rows } = await client.read<ApiKey>(
    `select ${keyColumns} from public.api_keys k left join public.profiles p on p.id = k.created_by
     where k.team_id = $1 order by k.created_at desc, k.id desc`,
    [teamId],
  )
  return rows
}

/** Creates a key for the team, made by the client's actor; the raw key is in this answer only. */
export async function createApiKey(client: AuditedClient, teamId: string, input: z.output<typeof CreateApiKeyBody>): Promise<CreatedApiKey> {
  const { key, prefix, hash } = generateApiKey()
  const { rows } = await client.query<ApiKey>(
    `with k as (
       insert into public.api_keys (team_id, name, key_prefix, key_hash, created_by, expires_at)
       values ($1, $2, $3, $4, $5, $6) returning *
     )
     select ${keyColumns} from k left join public.profiles p on p.id = k.created_by`,
    [teamId, input.name, prefix, hash, client.context.actorId, input.expires_at ?? null],
  )
  return { ...rows[0]!, key }
}

/** Revokes a key of the team: 404 for a key of another team, 409 when it is already revoked. */
export async function revokeApiKey(client: AuditedClient, teamId: string, keyId: string): Promise<ApiKey> {
  return client.transaction(async (tx) => {
    const { rows } = await tx.query<ApiKey>(
      `with k as (
         update public.api_keys set revoked_at = now()
         where id = $1 and team_id = $2 and revoked_at is null returning *
       )
       select ${keyColumns} from k left join public.profiles p on p.id = k.created_by`,
      [keyId, teamId],
    )
    if (rows[0]) return rows[0]
    const existing = await tx.query('select 1 from public.api_keys where id = $1 and team_id = $2', [keyId, teamId])
    if (existing.rowCount) throw createError({ statusCode: 409, statusMessage: 'This API key is already revoked' })
    throw createError({ statusCode: 404, statusMessage: 'API key not found' })
  })
}

/** The full api_keys row (key_hash included), as authApiKey returns it. */
export interface ApiKeyRow extends Omit<ApiKey, 'created_by_name'> {
  key_hash: string
}

const touchInterval = 60_000
const lastTouched = new Map<string, number>()

/**
 * Records that a key was used, at most once a minute per key (here and, through the where clause,
 * across app instances), off the response path; a failure is logged and never reaches the request.
 */
function touchApiKey(db: Database, apiKey: ApiKeyRow) {
  const now = Date.now()
  const lastUsed = apiKey.last_used_at ? new Date(apiKey.last_used_at).getTime() : 0
  if (now - Math.max(lastUsed, lastTouched.get(apiKey.id) ?? 0) < touchInterval) return
  lastTouched.set(apiKey.id, now)
  const client = createAuditedClient(db, { actorId: apiKey.created_by, teamId: apiKey.team_id, source: 'api' })
  client.query(
    `update public.api_keys set last_used_at = now()
     where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
    [apiKey.id],
  ).catch(error => console.error('[api-keys] could not record last_used_at for key', apiKey.id, error))
}

const unauthorized = (message: string) => createError({ statusCode: 401, statusMessage: message })

/**
 * Authenticates a public API request by its bearer key: 401 when the header is
 * missing or malformed, or the key is unknown, revoked or expired. Looked up on every request, so a
 * revocation takes effect on the next one. Returns the key row and an audited client (source `api`,
 * actor the key's creator, team the key's team).
 */
export async function authApiKey(event: H3Event): Promise<{ apiKey: ApiKeyRow, client: AuditedClient }> {
  const header = getRequestHeader(event, 'authorization')
  const token = header ? /^Bearer +(\S+) *$/i.exec(header)?.[1] : undefined
  if (!token) throw unauthorized('Send the API key as "Authorization: Bearer <key>"')
  const db = await useDb()
  // looked up by its hash (a unique index), so no secret is compared in JavaScript
  const { rows } = await db.query<ApiKeyRow>('select * from public.api_keys where key_hash = $1', [hashApiKey(token)])
  const apiKey = rows[0]
  if (!apiKey) throw unauthorized('Unknown API key')
  if (apiKey.revoked_at) throw unauthorized('This API key has been revoked')
  if (apiKey.expires_at && new Date(apiKey.expires_at).getTime() <= Date.now()) throw unauthorized('This API key has expired')
  touchApiKey(db, apiKey)
  const client = createAuditedClient(db, { actorId: apiKey.created_by, teamId: apiKey.team_id, source: 'api', apiKeyId: apiKey.id })
  return { apiKey, client }
}
