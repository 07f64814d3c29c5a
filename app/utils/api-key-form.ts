import { z } from 'zod'

// An API key's form (create and edit): its name, its access, and its expiry as a calendar day,
// which ends at midnight in the browser's time zone.
export const ApiKeyFormSchema = z.object({
  name: CreateApiKeyBody.shape.name,
  scopes: ApiKeyScopesSchema.nullable().refine(scopes => scopes !== null, 'Give the key access to at least one table'),
  expires_on: z.string().optional(),
})

/** The calendar day (YYYY-MM-DD) of a moment in the browser's time zone; '' for none. */
export function localDay(value: string | Date | null): string {
  if (!value) return ''
  const date = new Date(value)
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`
}

/** The last moment of a calendar day in the browser's time zone, as ISO text; null for no day. */
export function endOfLocalDay(day: string | undefined): string | null {
  return day ? new Date(`${day}T23:59:59.999`).toISOString() : null
}
