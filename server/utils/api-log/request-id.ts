import { randomBytes } from 'node:crypto'
import { decodeTime, monotonicFactory } from 'ulid'

// Request ids are `req_` and a ULID: 48 bits of milliseconds then 80 random bits, in Crockford's
// base32 (26 characters of [0-9A-Z]). Made in memory, unique over instances by their randomness,
// and ordered by time (monotonic within a millisecond on one instance).
// The random characters come from a pool of bytes filled 4 KiB at a time: the package's own source
// asks the operating system once per character (16 calls an id, about 0.3 ms on this machine).
let pool = randomBytes(4096)
let offset = 0
function pooledRandom(): number {
  if (offset >= pool.length) {
    pool = randomBytes(4096)
    offset = 0
  }
  return pool[offset++]! / 256
}
const nextUlid = monotonicFactory(pooledRandom)

const requestIdPattern = /^req_[0-9A-HJKMNP-TV-Z]{26}$/

/** A new request id, and its time (ms since the epoch: now, or the last id's when the clock went back). */
export function newRequestId(): { id: string, at: number } {
  const ulid = nextUlid()
  return { id: `req_${ulid}`, at: decodeTime(ulid) }
}

/** The time (ms since the epoch) a request id of this app was made at, or undefined for anything else. */
export function requestIdTime(id: string): number | undefined {
  if (!requestIdPattern.test(id)) return undefined
  try {
    return decodeTime(id.slice(4))
  }
  catch {
    return undefined
  }
}
