import { decodeTime, monotonicFactory } from 'ulid'

// Request ids are `req_` and a ULID: 48 bits of milliseconds then 80 random bits, in Crockford's
// base32 (26 characters of [0-9A-Z]). Made in memory, unique over instances by their randomness,
// and ordered by time (monotonic within a millisecond on one instance).
const nextUlid = monotonicFactory()

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
