import { z } from 'zod'

/** A uuid in its text form, in any case. */
export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A table name as the app's tables are named: a lower-case SQL identifier of at most 63 characters. */
export const tableNamePattern = /^[a-z_][a-z0-9_]{0,62}$/

/** A page of a list: limit 1..100 (default 50), offset >= 0 (default 0); query-string values are coerced. */
export const PageQuery = z.object({
  limit: z.coerce.number({ error: 'must be an integer from 1 to 100' }).int('must be an integer from 1 to 100')
    .min(1, 'must be an integer from 1 to 100').max(100, 'must be an integer from 1 to 100').default(50),
  offset: z.coerce.number({ error: 'must be a non-negative integer' }).int('must be a non-negative integer')
    .min(0, 'must be a non-negative integer').max(Number.MAX_SAFE_INTEGER, 'is too large').default(0),
})
