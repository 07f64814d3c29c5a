import type { H3Event } from 'h3'
import { apiError } from './errors'
import { requestHeader } from '../http/request'

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

/**
 * Reads `Prefer`; with `handling=strict`, a preference the API does not know is a 400 (PGRST122),
 * otherwise it is ignored, as PostgREST does.
 */
export function readPreferences(event: H3Event): Preferences {
  const prefer = requestHeader(event, 'prefer') ?? ''
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

/** The Preference-Applied header: the preferences this answer honoured. */
export function applyPreferences(event: H3Event, preferences: Preferences, applied: (keyof Preferences)[]) {
  const names: Record<string, string> = { maxAffected: 'max-affected' }
  const given = applied.filter(name => preferences[name] !== undefined).map(name => `${names[name] ?? name}=${preferences[name]}`)
  if (given.length) setResponseHeader(event, 'preference-applied', given.join(', '))
}
