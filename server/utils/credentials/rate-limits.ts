import type { H3Event } from 'h3'
import type { Database, Queryable } from '../db/db-drivers'
import { defineCounter } from '../metrics'
import { setting } from '../settings'

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
 * What a request may do under its limit: served or not, what the answer says remains (never more
 * than is left), seconds until the window resets; and, when a fresher figure of what remains is
 * being read, that figure (it never fails: it falls back to `remaining`).
 */
export interface RateDecision {
  isAllowed: boolean
  remaining: number
  fresher?: Promise<number>
  reset: number
}

/** The fresher RateLimit-Remaining of requests whose answer is not written yet. */
const pendingRemaining = new WeakMap<H3Event, Promise<number>>()

/**
 * Puts the fresher RateLimit-Remaining of the request's decision in its answer, once read (the
 * header says the decision's own figure until then); a handler awaits it before the answer is
 * written. Nothing to do for a request without one.
 */
export async function settleRateLimit(event: H3Event): Promise<void> {
  const fresher = pendingRemaining.get(event)
  if (!fresher) return
  pendingRemaining.delete(event)
  const remaining = await fresher
  if (!event.node.res.headersSent) setResponseHeader(event, 'ratelimit-remaining', String(Math.max(0, remaining)))
}

/**
 * Sets the RateLimit-* headers of the answer and, over the limit, throws a 429 with Retry-After
 * (the request then does nothing). Takes a counter's answer (count and reset) or a decision.
 */
export function enforceRateLimit(event: H3Event, counted: RateCount | RateDecision, who: string): void {
  const { limit, windowSeconds } = apiRateLimit()
  const decision = 'isAllowed' in counted ? counted : { isAllowed: counted.count <= limit, remaining: limit - counted.count, reset: counted.reset }
  const reset = Math.max(1, decision.reset)
  setResponseHeaders(event, {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(Math.max(0, decision.isAllowed ? decision.remaining : 0)),
    'ratelimit-reset': String(reset),
  })
  if (decision.isAllowed) {
    if ('fresher' in decision && decision.fresher) pendingRemaining.set(event, decision.fresher)
    return
  }
  setResponseHeader(event, 'retry-after', reset)
  throw createError({ statusCode: 429, statusMessage: `Rate limit exceeded: ${limit} requests per ${windowSeconds} seconds for ${who}; retry in ${reset} seconds` })
}

// Leased blocks. A key's counter lives in Postgres (rate_limits, one fixed window); an instance
// claims a block of the window's requests in one atomic statement that never takes the count past
// the limit, serves the block from memory and claims again when it runs out. The block is small:
// at most 1/20 of the limit (1/40 while other instances claim the same key; 100 at most) and 1/8
// of what is left (1/16 when shared), so that the requests stranded in other instances' unused
// blocks when a window runs out stay under 10% of the limit (one block per instance). Reads then write nothing on most requests.

/** A key's block in this instance. */
interface KeyBlock {
  /** When the window of the block ends (ms since the epoch, by the database's clock). */
  windowEndsAt: number
  /** The window's count in Postgres after this instance's latest claim (every instance's blocks included). */
  count: number
  /** Requests of the latest block not yet served. */
  unused: number
  /** The latest block's size. */
  granted: number
  /** Until when other instances are taken to claim this key too (ms since the epoch). */
  sharedUntil: number
  /** No request has been served from the block yet (its count is as fresh as can be). */
  justClaimed?: boolean
  /** The claim in flight, which requests that find the block empty wait for. */
  claiming?: Promise<KeyBlock>
}

const blocks = new Map<string, KeyBlock>()
/** Entries kept at most; past it, those of ended windows are dropped. */
const maxBlocks = 10_000

/** The claim statement: $1 the counter's key, $2 the window in seconds, $3 the largest block, $4 the limit, $5 the divisor of what is left. */
function claimSql(): string {
  const used = '(case when r.window_started_at = excluded.window_started_at then r.count else 0 end)'
  const grant = (count: string) => `greatest(0, least($3::int, $4::int - ${count}, greatest(1, ($4::int - ${count}) / $5::int)))`
  return `with relaxed as materialized (select set_config('synchronous_commit', 'off', true)),
    w as (select to_timestamp(floor(extract(epoch from now()) / $2::int) * $2::int) as started from relaxed)
  insert into public.rate_limits as r (key, window_started_at, count, granted)
  select $1, w.started, ${grant('0')}, ${grant('0')} from w
  on conflict (key) do update set
    granted = ${grant(used)},
    count = ${used} + ${grant(used)},
    window_started_at = excluded.window_started_at
  returning granted, count, extract(epoch from window_started_at)::float8 * 1000 + $2::int * 1000 as window_ends_at`
}
const rateBlockClaims = defineCounter('rate_limit_block_claims_total', 'Blocks of requests this instance claimed from a key\'s counter in Postgres')

/** The claim statement's text. */
export const claimRateBlockSql = claimSql()

async function claimBlock(db: Pick<Queryable, 'query'>, keyId: string, previous: KeyBlock | undefined): Promise<KeyBlock> {
  const { limit, windowSeconds } = apiRateLimit()
  const now = Date.now()
  const isShared = (previous?.sharedUntil ?? 0) > now
  const largest = Math.max(1, Math.min(100, Math.floor(limit / (isShared ? 40 : 20))))
  const { rows } = await db.query<{ granted: number, count: number, window_ends_at: number }>(
    claimRateBlockSql, [`key:${keyId}`, windowSeconds, largest, limit, isShared ? 16 : 8], { prepare: true })
  const { granted, count, window_ends_at: windowEndsAt } = rows[0]!
  rateBlockClaims().inc()
  // another instance claimed since this one's latest claim of the window: the key is shared
  const countBefore = count - granted
  const sameWindow = previous?.windowEndsAt === windowEndsAt
  const othersClaimed = sameWindow ? countBefore > previous!.count : countBefore > 0
  const sharedUntil = othersClaimed ? now + 2 * windowSeconds * 1000 : (previous?.sharedUntil ?? 0)
  return { windowEndsAt, count, unused: granted, granted, sharedUntil, justClaimed: true }
}

/** The window's count in Postgres now ($1 the counter's key, $2 the window in seconds), with the end of its window. */
export const readRateCountSql = `select count, extract(epoch from window_started_at)::float8 * 1000 + $2::int * 1000 as window_ends_at
  from public.rate_limits where key = $1`

/** Per key: the count read that has not been sent yet (requests served before it is sent share it), and the one running. */
const countReads = new Map<string, { queued?: Promise<number | null>, running?: Promise<unknown> }>()

/**
 * The key's count in Postgres, read after the caller's request was counted: one read at a time
 * per key, riding with the next statement this instance sends (usually the request's own);
 * requests that find a read not yet sent share it, the others queue the next one. Null when the
 * counter is in another window than `windowEndsAt`.
 */
function freshCount(db: Pick<Database, 'ride'>, keyId: string, windowEndsAt: number): Promise<number | null> {
  let reads = countReads.get(keyId)
  if (!reads) countReads.set(keyId, reads = {})
  if (reads.queued) return reads.queued
  const state = reads
  const read = (state.running ?? Promise.resolve()).catch(() => undefined).then(async () => {
    const { windowSeconds } = apiRateLimit()
    // once sent, a request counted after it needs a later read
    const { rows } = await db.ride<{ count: number, window_ends_at: number }>(readRateCountSql, [`key:${keyId}`, windowSeconds], () => {
      state.queued = undefined
    })
    return rows[0] ?? null
  }).finally(() => {
    if (state.running === read && !state.queued) countReads.delete(keyId)
  })
  state.queued = read.then(row => (row && row.window_ends_at === windowEndsAt ? row.count : null))
  state.running = read
  return state.queued
}

/**
 * Counts a request of a key against its limit from the key's leased block, claiming a new block
 * from Postgres when this instance's is used up.
 *
 * RateLimit-Remaining never says more than is left, however many instances serve the key. What
 * is left is the limit less every request served; Postgres counts every block claimed, served or
 * not, so the limit less that count, plus this instance's own unused block, is never more than
 * is left (other instances' unused blocks only add to it). A claim answers the count. A request
 * served from a block is decided at once; what remains is first its block's unused requests
 * (never more than is left), and `fresher` is the figure from the count read after it (one read
 * in flight per key and instance, shared by the requests that wait for it, riding with the
 * request's own statement), which `settleRateLimit` puts in the answer before it is written. The
 * decision itself never waits for another instance.
 */
export async function takeKeyRequest(db: Pick<Database, 'query' | 'ride'>, keyId: string): Promise<RateDecision> {
  const { limit } = apiRateLimit()
  for (;;) {
    const now = Date.now()
    let block = blocks.get(keyId)
    if (block && block.windowEndsAt <= now && !block.claiming) block = { ...block, unused: 0, count: 0, granted: 0 }
    if (block && block.unused > 0) {
      block.unused--
      const reset = Math.ceil((block.windowEndsAt - now) / 1000)
      if (block.justClaimed) {
        // the first request of a block: the claim's count is fresh
        block.justClaimed = false
        return { isAllowed: true, remaining: limit - block.count + block.unused, reset }
      }
      const { count: claimedCount, unused } = block
      // another window in Postgres (the clocks differ by a little), or no answer: this block's unused requests are left at least
      const fresher = freshCount(db, keyId, block.windowEndsAt).then(
        count => count === null ? unused : limit - Math.max(count, claimedCount) + unused,
        () => unused,
      )
      return { isAllowed: true, remaining: unused, fresher, reset }
    }
    // one claim at a time per key: the others wait for it and then take from its block
    const claiming = block?.claiming ?? claim(db, keyId, block)
    const claimed = await claiming
    // a claim that granted nothing: the window is used up (each later request claims again,
    // so that a window that ends, or a counter reset, is seen)
    if (claimed.granted === 0) return { isAllowed: false, remaining: 0, reset: Math.ceil((claimed.windowEndsAt - Date.now()) / 1000) }
  }
}

function claim(db: Pick<Queryable, 'query'>, keyId: string, previous: KeyBlock | undefined): Promise<KeyBlock> {
  const claiming = claimBlock(db, keyId, previous).then((claimed) => {
    blocks.set(keyId, claimed)
    return claimed
  }, (error) => {
    const current = blocks.get(keyId)
    if (current?.claiming === claiming) current.claiming = undefined
    throw error
  })
  if (blocks.size >= maxBlocks) {
    const now = Date.now()
    for (const [id, old] of blocks) if (old.windowEndsAt <= now && !old.claiming) blocks.delete(id)
  }
  blocks.set(keyId, { ...(previous ?? { windowEndsAt: 0, count: 0, unused: 0, granted: 0, sharedUntil: 0 }), claiming })
  return claiming
}
