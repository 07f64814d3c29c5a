import type { H3Event } from 'h3'
import type { z } from 'zod'

/** A 400 whose message names the first invalid field. */
export function validationError(issues: readonly z.core.$ZodIssue[]) {
  const issue = issues[0]
  const field = issue?.path.length ? issue.path.join('.') : undefined
  const message = issue?.message ?? 'Invalid input'
  return createError({ statusCode: 400, statusMessage: field ? `${field}: ${message}` : message })
}

/** Parses a value with a zod schema, or throws a 400 naming the field. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value)
  if (!result.success) throw validationError(result.error.issues)
  return result.data
}

/** Reads the JSON body and validates it; malformed JSON and invalid fields are 400s. */
export async function readValidBody<T extends z.ZodType>(event: H3Event, schema: T): Promise<z.output<T>> {
  let body: unknown
  try {
    body = await readBody(event)
  }
  catch {
    throw createError({ statusCode: 400, statusMessage: 'The request body is not valid JSON' })
  }
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw createError({ statusCode: 400, statusMessage: 'The request body must be a JSON object' })
  }
  return parseInput(schema, body)
}

/** Validates the query string. */
export function readValidQuery<T extends z.ZodType>(event: H3Event, schema: T): z.output<T> {
  return parseInput(schema, getQuery(event))
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A path id; one that is not a uuid cannot name a record, so it is a 404. */
export function requireIdParam(event: H3Event, name: string, what = 'Record'): string {
  const value = getRouterParam(event, name)
  if (!value || !uuidPattern.test(value)) throw createError({ statusCode: 404, statusMessage: `${what} not found` })
  return value.toLowerCase()
}
