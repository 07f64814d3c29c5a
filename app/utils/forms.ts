import type { FormSchema } from '@nuxt/ui'

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
  const standard = schema['~standard']
  const validate: typeof standard.validate = async (value) => {
    const result = await standard.validate(value)
    if (!result.issues) return result
    return {
      issues: result.issues.map((issue) => {
        const path = issue.path?.map(item => (typeof item === 'object' ? item.key : item)).join('.') ?? ''
        const isSentence = /^[A-Z]/.test(issue.message)
        return path && !isSentence ? { ...issue, message: `${fieldLabel(path)} ${issue.message}` } : issue
      }),
    }
  }
  return { '~standard': { ...standard, validate } } as S
}
