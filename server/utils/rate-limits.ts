import type { H3Event } from 'h3'
import type { Queryable } from './db-drivers'

let rateLimit: { limit: number, windowSeconds: number } | undefined

/**
 * The public API's limit: requests per window, per key; from API_RATE_LIMIT and
 * API_RATE_WINDOW_SECONDS, read once (settings do not change while the process runs).
 */
export function apiRateLimit(): { limit: number, windowSeconds: number } {
  if (!rateLimit) {
    const limit = Number(setting('apiRateLimit') || 600)
    const windowSeconds = Number(setting('apiRateWindowSeconds') || 60)
    rateLimit = { limit: limit > 0 ? limit : 600, windowSeconds: windowSeconds > 0 ? windowSeconds : 60 }
  }
  return rateLimit
}

/** What a counter says after counting a request: requests so far in the window, seconds until it resets. */
export interface RateCount {
  count: number
  reset: number
}

/**
 * SQL of a CTE that counts one request for `key` in the current fixed window ($window seconds
 * long, aligned to the epoch) and returns `count` and `reset`; `source` selects the rows to count
 * (none: nothing is counted).
 */
export function countRequestSql(keyExpression: string, source: string, windowParam: string): string {
  return `insert into public.rate_limits as r (key, window_started_at, count)
    select ${keyExpression}, to_timestamp(floor(extract(epoch from now()) / ${windowParam}) * ${windowParam}), 1 from ${source}
    on conflict (key) do update set
      count = case when r.window_started_at = excluded.window_started_at then r.count + 1 else 1 end,
      window_started_at = excluded.window_started_at
    returning count, ceil(extract(epoch from window_started_at + make_interval(secs => ${windowParam}) - now()))::int as reset`
}

/** Counts a request of an address (a request without a valid key). */
export async function countAddressRequest(db: Queryable, event: H3Event): Promise<RateCount> {
  const { windowSeconds } = apiRateLimit()
  const address = getRequestIP(event) ?? 'unknown'
  // like a key's count, committed without waiting for its WAL flush
  const relaxed = `(select set_config('synchronous_commit', 'off', true)) as relaxed`
  const { rows } = await db.query<RateCount>(countRequestSql('$1', relaxed, '$2::int'), [`ip:${address}`, windowSeconds])
  return rows[0]!
}

/**
 * Sets the RateLimit-* headers of the answer and, over the limit, throws a 429 with Retry-After
 * (the request then does nothing).
 */
export function enforceRateLimit(event: H3Event, counted: RateCount, who: string): void {
  const { limit, windowSeconds } = apiRateLimit()
  const reset = Math.max(1, counted.reset)
  setResponseHeaders(event, {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(Math.max(0, limit - counted.count)),
    'ratelimit-reset': String(reset),
  })
  if (counted.count <= limit) return
  setResponseHeader(event, 'retry-after', reset)
  throw createError({ statusCode: 429, statusMessage: `Rate limit exceeded: ${limit} requests per ${windowSeconds} seconds for ${who}; retry in ${reset} seconds` })
}
