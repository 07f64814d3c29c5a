// One change hub per instance: it follows every team's events with one cursor, woken by the
// `record_events` notification a committing write sends (one LISTEN connection per instance,
// server/utils/db/notifications.ts), and hands each event to the followers of its team from memory.
// No subscriber ever queries on its own behalf after its replay.
import type { Database } from '../db/db-drivers'
import { listen, onReconnect } from '../db/notifications'
import { announceEventsSql, announcer } from './announce'
import { latestEventId, readAllEvents, readTeamEvents, type StoredEvent } from './feed'
import { useDb } from '../db/database'
import { logger } from '../log/logger'
import { schedule } from '../jobs/scheduler'

const log = logger('changes')

/** How many events one read takes. */
const pageSize = 500
/** A committed event waits behind a transaction still open: look again after this long. */
const waitingRetryMs = 10
/** Without a notification (lost, or the connection down) the hub still looks this often. */
const fallbackPollMs = 1_000
/**
 * Reads start at most this often: under a burst of writes every commit notifies, and reading
 * after each one cost the public API about 0.07 of its write rate with 500 streams open
 * (`BENCH_STREAMS=500 npm run bench:api`); a read takes everything since the last one, so a
 * delivery waits at most this long more.
 */
const minReadIntervalMs = 10

/** Something following one team's events: the hub offers it each of them, in order. */
export interface Follower {
  teamId: string
  offer(stored: StoredEvent): void
}

const followersByTeam = new Map<string, Set<Follower>>()
let db: Database | undefined
let cursor = ''
let started: Promise<void> | undefined
let isReading = false
let isWakeQueued = false
let retryTimer: ReturnType<typeof setTimeout> | undefined

function start(): Promise<void> {
  started ??= (async () => {
    db = await useDb()
    cursor = await latestEventId(db)
    onReconnect(wake)
    await listen('record_events', wake)
    schedule({ name: 'change-hub-poll', everyMs: fallbackPollMs, runAtStart: false, run: wake })
  })()
  return started
}

let lastReadAt = 0
let spacingTimer: ReturnType<typeof setTimeout> | undefined

/** One notification for the app's committed writes of the last few ms (changes/announce.ts). */
const announce = announcer(() => useDb()
  .then(database => database.query(announceEventsSql))
  .catch(error => log.error('Could not announce new events', { error })))

/**
 * After a write of the app commits (its transaction told the change feed's trigger not to notify
 * inside it): this instance's hub reads at once, and one notification wakes every instance's hub.
 */
export function announceChanges(): void {
  wake()
  announce()
}

/** Reads what is new and fans it out; a wake during a read (or too soon after one) makes one more read after it. */
function wake(): void {
  if (!db) return
  if (isReading || spacingTimer) {
    isWakeQueued = true
    return
  }
  const wait = lastReadAt + minReadIntervalMs - performance.now()
  if (wait > 0) {
    spacingTimer = setTimeout(() => {
      spacingTimer = undefined
      wake()
    }, wait)
    return
  }
  lastReadAt = performance.now()
  isReading = true
  void read(db).finally(() => {
    isReading = false
    if (isWakeQueued) {
      isWakeQueued = false
      wake()
    }
  })
}

async function read(database: Database): Promise<void> {
  try {
    for (;;) {
      const { events, read: count, last, waiting } = await readAllEvents(database, cursor, pageSize, [...followersByTeam.keys()])
      if (last) cursor = last
      for (const stored of events) {
        for (const follower of followersByTeam.get(stored.teamId) ?? []) {
          try {
            follower.offer(stored)
          }
          catch (error) {
            log.error('A follower failed', { error })
          }
        }
      }
      if (count === pageSize) continue
      if (waiting && !retryTimer) {
        retryTimer = setTimeout(() => {
          retryTimer = undefined
          wake()
        }, waitingRetryMs)
      }
      return
    }
  }
  catch (error) {
    log.error('Could not read new events', { error })
  }
}

export interface FollowOptions {
  teamId: string
  /** Replay the events after this id first; null: from now on. */
  after: string | null
  /** The tables and types the replay reads (the same that `accepts` allows). */
  tables: () => string[]
  types?: string[]
  /** Whether this follower gets an event (its tables, types and any filter of its own). */
  accepts: (stored: StoredEvent) => boolean
  send: (stored: StoredEvent) => void
}

/** A follower's handle: its last event id, and how it stops. */
export interface Following {
  readonly lastId: () => string
  stop(): void
}

/**
 * Follows a team: replays the events after `after` from the database, then gets the hub's as they
 * come. The follower joins the hub before its replay reads, and keeps what the hub offers meanwhile;
 * anything at or before the replay's last event is dropped, so nothing is missed or sent twice.
 */
export async function follow(options: FollowOptions): Promise<Following> {
  await start()
  const database = db!
  let isReplaying = true
  let isStopped = false
  let last = ''
  const held: StoredEvent[] = []
  const pass = (stored: StoredEvent) => {
    if (stored.event.id <= last) return
    last = stored.event.id
    if (options.accepts(stored)) options.send(stored)
  }
  const follower: Follower = {
    teamId: options.teamId,
    offer: stored => isReplaying ? held.push(stored) : pass(stored),
  }
  let team = followersByTeam.get(options.teamId)
  if (!team) followersByTeam.set(options.teamId, team = new Set())
  team.add(follower)
  const stop = () => {
    isStopped = true
    const set = followersByTeam.get(options.teamId)
    set?.delete(follower)
    if (set?.size === 0) followersByTeam.delete(options.teamId)
  }
  try {
    last = options.after ?? await latestEventId(database)
    for (;;) {
      const page = await readTeamEvents(database, options.teamId, { after: last, tables: options.tables(), types: options.types, limit: 100 })
      for (const stored of page) {
        if (isStopped) return { lastId: () => last, stop }
        pass(stored)
      }
      if (page.length < 100) break
    }
  }
  catch (error) {
    stop()
    throw error
  }
  isReplaying = false
  for (const stored of held.splice(0)) pass(stored)
  return { lastId: () => last, stop }
}

/** Open followers on this instance (for /metrics and the benchmark). */
export function followerCount(): number {
  let count = 0
  for (const set of followersByTeam.values()) count += set.size
  return count
}
