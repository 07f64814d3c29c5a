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

/** How deep a request body may nest arrays and objects (the body itself is level 1). */
export const maxBodyDepth = 64

/** Why Postgres could not store this string in text or jsonb, or null when it can. */
function unstorableText(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)'
  // JSON can carry half of a UTF-16 pair ("\ud800"); Postgres refuses it in text and jsonb
  if (!text.isWellFormed()) return 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)'
  return null
}

/**
 * The first thing in `value` that Postgres cannot store, as a 400's message: a string (value or key)
 * with a NUL character or a lone surrogate, or arrays and objects nested deeper than `maxBodyDepth`.
 * It walks with its own stack, so a body nested 100,000 levels deep is refused, not a stack overflow.
 */
export function unstorableValue(value: unknown): string | null {
  // a path names the field as validation errors do: `message.parts.0.text`, and `[1].title` for
  // an element of a bulk body (an array at the top)
  const stack: { item: unknown, path: string, depth: number }[] = [{ item: value, path: '', depth: 0 }]
  const named = (path: string, problem: string) => {
    const field = path.replaceAll('\u0000', '\\u0000').replace(/\p{Surrogate}/gu, '\uFFFD')
    return field ? `${field}: ${problem}` : problem
  }
  while (stack.length) {
    const { item, path, depth } = stack.pop()!
    if (typeof item === 'string') {
      const problem = unstorableText(item)
      if (problem) return named(path, problem)
      continue
    }
    if (item === null || typeof item !== 'object') continue
    if (depth >= maxBodyDepth) return `The input nests arrays and objects more than ${maxBodyDepth} levels deep`
    const isArray = Array.isArray(item)
    const entries = Object.entries(item)
    // pushed last to first, so the first problem in reading order is the one named
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!
      const childPath = isArray && !path ? `[${key}]` : path ? `${path}.${key}` : key
      const problem = isArray ? null : unstorableText(key)
      if (problem) return named(childPath, problem)
      stack.push({ item: child, path: childPath, depth: depth + 1 })
    }
  }
  return null
}

/**
 * JSON text of a value that is not the client's input (a model's tool call, say), made storable
 * in jsonb: NUL characters and lone surrogates become U+FFFD instead of failing the write.
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => typeof item === 'string' ? item.replaceAll('\u0000', '\uFFFD').toWellFormed() : item)
}

/** Throws a 400 naming what in `value` Postgres cannot store (see `unstorableValue`). */
export function rejectUnstorable(value: unknown): void {
  const problem = unstorableValue(value)
  if (problem) throw createError({ statusCode: 400, statusMessage: problem })
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
  // before any handler walks it: too deep a body or text Postgres refuses is a 400, never a 500
  rejectUnstorable(body)
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
