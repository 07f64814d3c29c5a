import type { H3Event } from 'h3'
import type { z } from 'zod'
import { uuidPattern } from '#shared/utils/patterns'

/** A 400 whose message names the first invalid field. */
export function validationError(issues: readonly z.core.$ZodIssue[]) {
  const issue = issues[0]
  const field = issue?.path.length ? issue.path.join('.') : undefined
  const message = issue?.message ?? 'Invalid input'
  return createError({ statusCode: 400, statusMessage: field ? `${field}: ${message}` : message })
}

/** The path of the first string (value or key) in `value` that Postgres cannot store in text or jsonb: one with a NUL character. */
export function unstorableStringPath(value: unknown, path: string[] = []): string[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined
  if (value === null || typeof value !== 'object') return undefined
  for (const [key, child] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...path, key]
    const found = unstorableStringPath(child, [...path, key])
    if (found) return found
  }
  return undefined
}

/**
 * JSON text of a value that is not the client's input (a model's tool call, say), made storable
 * in jsonb: NUL characters become U+FFFD instead of failing the write.
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => typeof item === 'string' ? item.replaceAll('\u0000', '\uFFFD') : item)
}

/** Throws a 400 naming the first string in `value` that holds a NUL character, which Postgres cannot take. */
export function rejectUnstorable(value: unknown): void {
  const unstorable = unstorableStringPath(value)
  if (!unstorable) return
  const field = unstorable.join('.').replaceAll('\u0000', '\\u0000')
  throw createError({ statusCode: 400, statusMessage: `${field ? `${field}: ` : ''}must not contain the NUL character (\\u0000)` })
}

/** Parses a value with a zod schema, or throws a 400 naming the field. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  // every body and query string passes here: text Postgres would refuse never reaches a write
  rejectUnstorable(value)
  const result = schema.safeParse(value)
  if (!result.success) throw validationError(result.error.issues)
  return result.data
}

/**
 * Reads the JSON body and validates it; malformed JSON and invalid fields are 400s. With
 * `optional`, a request without a body is read as `{}`.
 */
export async function readValidBody<T extends z.ZodType>(event: H3Event, schema: T, options: { optional?: boolean } = {}): Promise<z.output<T>> {
  return parseInput(schema, await readJsonBody(event, options))
}

/**
 * Reads the JSON body: an object, or with `allowArray` an object or an array; malformed JSON and
 * anything else are 400s. With `optional`, a request without a body is read as `{}`.
 */
export async function readJsonBody<A extends boolean = false>(event: H3Event, options: { optional?: boolean, allowArray?: A } = {}): Promise<A extends true ? Record<string, unknown> | unknown[] : Record<string, unknown>> {
  let body: unknown
  try {
    body = await readBody(event)
  }
  catch {
    throw createError({ statusCode: 400, statusMessage: 'The request body is not valid JSON' })
  }
  if (options.optional && (body === undefined || body === '')) body = {}
  const isObject = body !== null && typeof body === 'object' && !Array.isArray(body)
  if (!isObject && !(options.allowArray && Array.isArray(body))) {
    throw createError({ statusCode: 400, statusMessage: `The request body must be a JSON object${options.allowArray ? ' or an array of objects' : ''}` })
  }
  return body as Record<string, unknown>
}

/** Validates the query string. */
export function readValidQuery<T extends z.ZodType>(event: H3Event, schema: T): z.output<T> {
  return parseInput(schema, getQuery(event))
}

/** A path id; one that is not a uuid cannot name a record, so it is a 404. */
export function requireIdParam(event: H3Event, name: string, what = 'Record'): string {
  const value = getRouterParam(event, name)
  if (!value || !uuidPattern.test(value)) throw createError({ statusCode: 404, statusMessage: `${what} not found` })
  return value.toLowerCase()
}
