import { z } from 'zod'
import { apiKeyAccessLevels } from '../api-keys-core'
import { isoDateTime } from './schemas'

export {
  apiKeyAccessLevels,
  defaultApiKeyScopes,
  scopeAccess,
  webhooksScope,
  webhooksScopeAllows,
  scopeAllows,
  describeScopes,
  apiKeyStatus,
  displayedKeyPrefix,
  type ApiKeyAccess,
  type ApiKeyScopes,
  type ApiKey,
  type RevokedApiKey,
  type CreatedApiKey,
  type ApiKeyStatus,
} from '../api-keys-core'

export const ApiKeyScopesSchema = z.record(
  z.string().max(63),
  z.enum(apiKeyAccessLevels, { error: 'must be "read" or "write"' }),
).refine(scopes => Object.keys(scopes).length > 0, 'must give access to at least one table')

/** Body of POST /api/teams/{teamId}/api-keys. */
export const CreateApiKeyBody = z.object({
  name: z.string().trim().min(1, 'is required').max(100, 'must be at most 100 characters'),
  scopes: ApiKeyScopesSchema.optional(),
  expires_at: isoDateTime
    .refine(value => Date.parse(value) > Date.now(), 'must lie in the future')
    .nullable()
    .optional(),
})

/** Body of PUT /api/teams/{teamId}/api-keys/{keyId}: the settings to change, each optional (`expires_at` null: never). */
export const UpdateApiKeyBody = z.object({
  name: CreateApiKeyBody.shape.name.optional(),
  scopes: ApiKeyScopesSchema.optional(),
  expires_at: CreateApiKeyBody.shape.expires_at,
}).strict()

/** Body of POST /api/teams/{teamId}/api-keys/{keyId}/roll: how long the old key keeps working. */
export const RollApiKeyBody = z.object({
  expires_in_seconds: z.number().int('must be a whole number of seconds').min(0, 'must be 0 or more').max(604_800, 'must be at most 604800 (7 days)').default(0),
})
