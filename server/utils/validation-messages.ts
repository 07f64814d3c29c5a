import type { z } from 'zod'

// The words of a validation error when a schema gives none: what the value must be, in the terms
// of the API (a number, a text, an id), never a validator's own notation (`Too small: expected
// number to be >=1`). validationError (validation.ts) puts the field's name before it. A schema's
// own message (`{ error: '...' }`) wins over these.

const kinds: Record<string, string> = {
  number: 'a number', int: 'an integer', bigint: 'an integer', string: 'a text', boolean: 'true or false',
  array: 'a list', object: 'an object', date: 'a date', null: 'null', record: 'an object',
}

const formats: Record<string, string> = {
  uuid: 'an id (a UUID)', guid: 'an id (a UUID)', url: 'a URL', email: 'an e-mail address',
  datetime: 'a date and time (ISO 8601, e.g. 2026-11-28T00:12:13.671Z)', date: 'a date (YYYY-MM-DD)',
  time: 'a time (HH:MM:SS)', regex: 'in the expected form', safeint: 'an integer',
}

const plural = (count: number | bigint, one: string, many = `${one}s`) => `${count} ${Number(count) === 1 ? one : many}`

function bound(issue: { origin?: string, inclusive?: boolean }, limit: number | bigint, direction: 'min' | 'max'): string {
  const word = direction === 'min' ? (issue.inclusive === false ? 'more than' : 'at least') : (issue.inclusive === false ? 'less than' : 'at most')
  switch (issue.origin) {
    case 'string': return direction === 'min' && Number(limit) === 1 && issue.inclusive !== false ? 'must not be empty' : `must be ${word} ${plural(limit, 'character')} long`
    case 'array': case 'set': return direction === 'min' && Number(limit) === 1 && issue.inclusive !== false ? 'must list at least one item' : `must list ${word} ${plural(limit, 'item')}`
    case 'date': return `must be ${direction === 'min' ? 'on or after' : 'on or before'} ${new Date(Number(limit)).toISOString()}`
    default: return `must be ${word} ${limit}`
  }
}

/** The message of a validation issue in words, or undefined to keep the schema's own. */
export function wordedIssue(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return 'is required'
      const expected = String(issue.expected)
      return `must be ${kinds[expected] ?? expected}`
    }
    case 'too_small': return bound(issue, issue.minimum, 'min')
    case 'too_big': return bound(issue, issue.maximum, 'max')
    case 'invalid_format': return `must be ${formats[issue.format] ?? `a valid ${issue.format}`}`
    case 'invalid_value': return issue.values.length === 1
      ? `must be ${JSON.stringify(issue.values[0])}`
      : `must be one of ${issue.values.map(value => JSON.stringify(value)).join(', ')}`
    case 'not_multiple_of': return `must be a multiple of ${issue.divisor}`
    case 'unrecognized_keys': return `${issue.keys.map(key => JSON.stringify(key.slice(0, 64))).join(', ')} ${issue.keys.length === 1 ? 'is not a field' : 'are not fields'} this input takes`
    case 'invalid_union': return 'is not in any of the accepted forms'
    case 'invalid_key': return 'has a key that is not accepted'
    case 'invalid_element': return 'has an element that is not accepted'
    default: return undefined
  }
}
