// API keys' types and rules, without the validation library: the browser's pages import them from
// here, so that a page that lists keys or grants does not load the schemas (the request bodies are
// in shared/utils/api-keys.ts, which re-exports all of this for the server and the forms).

/** What a key may do with a table: read it, or read and write it. */
export const apiKeyAccessLevels = ['read', 'write'] as const
export type ApiKeyAccess = typeof apiKeyAccessLevels[number]

/** A key's permissions: a table name, or "*" for every table, to its access; the most specific entry wins. */
export type ApiKeyScopes = Record<string, ApiKeyAccess>

/** The scopes of a key created without any: every table, read and write. */
export const defaultApiKeyScopes: ApiKeyScopes = { '*': 'write' }

/** The access the scopes give to a table: its own entry, else the "*" entry, else none. */
export function scopeAccess(scopes: ApiKeyScopes, table: string): ApiKeyAccess | null {
  return (Object.hasOwn(scopes, table) ? scopes[table] : scopes['*']) ?? null
}

/**
 * The scope that lets a key list, subscribe and unsubscribe the team's webhook endpoints. Only its
 * own entry grants it: "*" means every table, and a key that may write every table may not
 * thereby send the team's events to an address of its choice.
 */
export const webhooksScope = 'webhooks'

/** Whether the scopes allow `needed` on the team's webhook endpoints (their own `webhooks` entry only). */
export function webhooksScopeAllows(scopes: ApiKeyScopes, needed: ApiKeyAccess): boolean {
  const access = Object.hasOwn(scopes, webhooksScope) ? scopes[webhooksScope] : null
  return access === 'write' || (access === 'read' && needed === 'read')
}

/** Whether the scopes allow `needed` on the table (write includes read). */
export function scopeAllows(scopes: ApiKeyScopes, table: string, needed: ApiKeyAccess): boolean {
  const access = scopeAccess(scopes, table)
  return access === 'write' || (access === 'read' && needed === 'read')
}

/** A key's access in a few words: "All tables", "All tables, read-only", or the tables and their access. */
export function describeScopes(scopes: ApiKeyScopes): string {
  const { [webhooksScope]: webhooks, ...tables } = scopes
  const entries = Object.entries(tables)
  const level = (access: ApiKeyAccess) => (access === 'write' ? 'read and write' : 'read')
  const onTables = entries.length === 1 && tables['*']
    ? [tables['*'] === 'write' ? 'All tables' : 'All tables, read-only']
    : entries
        .sort(([a], [b]) => (a === '*' ? -1 : b === '*' ? 1 : a.localeCompare(b)))
        .map(([table, access]) => `${table === '*' ? 'other tables' : table}: ${level(access)}`)
  return [...onTables, ...(webhooks ? [`webhook endpoints: ${level(webhooks)}`] : [])].join(', ')
}

/** An API key as the management routes answer it (never its hash). */
export interface ApiKey {
  id: string
  team_id: string
  created_by: string
  created_by_name: string | null
  name: string
  key_prefix: string
  last_used_at: string | null
  expires_at: string | null
  revoked_at: string | null
  created_at: string
  scopes: ApiKeyScopes
  /** The key a roll replaced with this one (null: created, not rolled). */
  rolled_from: string | null
  /** The key that replaced this one in a roll (null: not rolled). */
  rolled_to: string | null
  /** The enabled webhook endpoints this key made (revoking it disables them). */
  webhook_endpoints: number
}

/** The revoke answer: the key and how many webhook endpoints it made were disabled with it. */
export interface RevokedApiKey extends ApiKey {
  disabled_endpoints: number
}

/** The creation answer: the key row plus the raw key, shown only this once. */
export interface CreatedApiKey extends ApiKey {
  key: string
}

export type ApiKeyStatus = 'active' | 'revoked' | 'expired'

/** The derived status of a key: revoked wins over expired. */
export function apiKeyStatus(apiKey: Pick<ApiKey, 'revoked_at' | 'expires_at'>, now = Date.now()): ApiKeyStatus {
  if (apiKey.revoked_at) return 'revoked'
  if (apiKey.expires_at && Date.parse(apiKey.expires_at) <= now) return 'expired'
  return 'active'
}

/**
 * How the UI names a key wherever it shows one: `sk_...` and its first 8 characters (the stored
 * prefix), `sk_...Xk3v9QaZ`. `sk_...` marks a shown prefix; it is not part of the key, which
 * begins with the 8 characters.
 */
export function displayedKeyPrefix(keyPrefix: string): string {
  return `sk_...${keyPrefix}`
}
