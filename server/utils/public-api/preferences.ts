import { apiError } from './errors'

/** The preferences of a request's `Prefer` headers (`return=representation, count=exact` → a map). */
export interface Preferences {
  return?: 'representation' | 'minimal' | 'headers-only'
  count?: 'exact' | 'planned' | 'estimated'
  resolution?: 'merge-duplicates' | 'ignore-duplicates'
  missing?: 'default' | 'null'
  handling?: 'strict' | 'lenient'
  maxAffected?: number
  tx?: 'commit' | 'rollback'
}

const preferenceValues: Record<string, string[]> = {
  return: ['representation', 'minimal', 'headers-only'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
  handling: ['strict', 'lenient'],
  tx: ['commit', 'rollback'],
}

/** A request without `Prefer`: no preference (shared, never changed). */
export const noPreferences: Readonly<Preferences> = Object.freeze({})

/**
 * Reads the `Prefer` header; with `handling=strict`, a preference the API does not know is a 400
 * (PGRST122), otherwise it is ignored, as PostgREST does.
 */
export function parsePreferences(prefer: string | undefined): Preferences {
  if (!prefer) return noPreferences
  const tokens = prefer.split(/[,;]/).map(token => token.trim()).filter(Boolean)
  const preferences: Record<string, unknown> = {}
  const unknown: string[] = []
  for (const token of tokens) {
    const [name = '', value = ''] = token.split('=', 2).map(part => part.trim())
    if (name === 'max-affected' && /^\d{1,9}$/.test(value)) preferences.maxAffected = Number(value)
    else if (preferenceValues[name]?.includes(value)) preferences[name] = value
    else unknown.push(token)
  }
  if (preferences.handling === 'strict' && unknown.length) {
    throw apiError(400, `Prefer: ${unknown[0]!.slice(0, 60)} is not a preference this API understands`, { code: 'PGRST122' })
  }
  return preferences as Preferences
}
