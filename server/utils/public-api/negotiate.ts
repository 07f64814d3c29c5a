import { apiError } from './errors'

/** What an answer's rows are sent as: a JSON array, one JSON object, or CSV. */
export type AnswerFormat = { kind: 'array' | 'object' | 'csv', stripNulls: boolean }

/** The answer without an `Accept` (or with a plain JSON one): a JSON array (shared, never changed). */
export const jsonArray: Readonly<AnswerFormat> = Object.freeze({ kind: 'array', stripNulls: false })

/**
 * The format the `Accept` header asks for: `application/json` (or none, or `*\/*`), PostgREST's
 * `application/vnd.pgrst.object+json` (one object) or `text/csv`; anything else is a 406.
 */
export function acceptedFormat(accept: string | undefined): AnswerFormat {
  if (!accept) return jsonArray
  const ranges = accept.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map(part => part.trim().toLowerCase())
    const q = Number(params.find(param => param.startsWith('q='))?.slice(2) ?? 1)
    return { type, stripNulls: params.includes('nulls=stripped'), q: Number.isFinite(q) ? q : 0 }
  }).filter(range => range.q > 0).sort((a, b) => b.q - a.q)
  for (const { type, stripNulls } of ranges) {
    if (['application/json', '*/*', 'application/*'].includes(type)) return jsonArray
    if (type === 'application/vnd.pgrst.array+json') return { kind: 'array', stripNulls }
    if (type === 'application/vnd.pgrst.object+json') return { kind: 'object', stripNulls }
    if (type === 'text/csv' || type === 'text/*') return { kind: 'csv', stripNulls: false }
  }
  throw apiError(406, `None of these media types are available: ${accept.slice(0, 100)}`, {
    code: 'PGRST107', hint: 'Ask for application/json, application/vnd.pgrst.object+json or text/csv',
  })
}
