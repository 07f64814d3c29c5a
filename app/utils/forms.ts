import type { FormSchema } from '@nuxt/ui'
import { humanize } from './data'

/** How a form's message names a field: `expires_on` -> `Expires on`, `project_id` -> `Project`. */
export function fieldLabel(path: string): string {
  return humanize(path.split('.')[0]!.replace(/_id$/, ''))
}

/**
 * The schema, whose messages name their field: "is required" on `name` reads "Name is required".
 * A message that is already a sentence (it starts with a capital) is kept. Every form of the app
 * validates through it (AppForm), so that a message shown away from its field still says which.
 */
export function namingFields<S extends FormSchema>(schema: S): S {
  if (!('~standard' in schema)) return schema
  const standard = (schema as unknown as StandardSchema)['~standard']
  const validate = async (value: unknown): Promise<StandardResult> => {
    const result = await standard.validate(value)
    if (!result.issues) return result
    return {
      issues: result.issues.map((issue) => {
        const path = issue.path?.map(item => String(typeof item === 'object' ? item.key : item)).join('.') ?? ''
        const isSentence = /^[A-Z]/.test(issue.message)
        return path && !isSentence ? { ...issue, message: `${fieldLabel(path)} ${issue.message}` } : issue
      }),
    }
  }
  return { '~standard': { ...standard, validate } } as unknown as S
}

/** The part of a Standard Schema (zod's `~standard`) that a form's validation uses. */
interface StandardIssue {
  message: string
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>
}
type StandardResult = { value: unknown, issues?: undefined } | { issues: ReadonlyArray<StandardIssue> }
interface StandardSchema {
  '~standard': { version: 1, vendor: string, validate: (value: unknown) => StandardResult | Promise<StandardResult> }
}
