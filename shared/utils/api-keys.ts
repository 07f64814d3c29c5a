import { z } from 'zod'
import { isoDateTime } from './schemas'

/** Body of POST /api/teams/{teamId}/api-keys. */
export const CreateApiKeyBody = z.object({
  name: z.string().trim().min(1, 'is required').max(100, 'must be at most 100 characters'),
  expires_at: isoDateTime
    .refine(value => Date.parse(value) > Date.now(), 'must lie in the future')
    .nullable()
    .optional(),
})

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

/** How the UI shows a key: `sk_...` followed by its prefix. */
export function displayedKeyPrefix(keyPrefix: string): string {
  return `sk_...${keyPrefix}`
}
