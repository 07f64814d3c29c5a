// Delivers the queued webhook events: claims due rows (claims.ts), signs and POSTs them (signing.ts,
// sender.ts) and records each attempt (attempts.ts), within the worker's limits.
import { randomUUID } from 'node:crypto'
import type { Database } from '../db/db-drivers'
import { recordAttempts, type FinishedAttempt } from './attempts'
import { claimDueDeliveries, releaseDeliveries, releaseHolds, type ClaimedDelivery } from './claims'
import type { WebhookSettings } from './delivery-settings'
import { attemptDelivery, closeSenderAgents } from './sender'
import { logger } from '../log/logger'

const log = logger('webhooks')

export interface WorkerLimits {
  /** Deliveries in flight at once, over all receivers. */
  total: number
  /** Deliveries in flight at once to one receiver (an endpoint, or a team's webhook_url). */
  perEndpoint: number
  /** The most deliveries one claim takes. */
  batchSize: number
}

export const defaultWorkerLimits: WorkerLimits = { total: 100, perEndpoint: 10, batchSize: 100 }

/**
 * How long a finished attempt may wait for others to be recorded with it in one statement (a full
 * batch is recorded at once). In a burst to one receiver, recording as soon as the previous
 * statement had finished gave statements of ~9 attempts: 540 for 5,000 deliveries (bench:webhooks).
 */
const recordDelayMs = 20

export interface WebhookWorker {
  /** Look for due deliveries now (a notification said some were queued). */
  wake(): void
  stop(): Promise<void>
}

/**
 * Delivers until stopped. It looks for due deliveries when woken (`wake()`: a notification that
 * some were queued), when a receiver may have more due and has room for them (below), and every
 * `pollIntervalMs` as a fallback. It sends concurrently within `limits` (so one slow receiver does
 * not hold up the others), and keeps more of each receiver's deliveries claimed and waiting, so that
 * a finished delivery's slot is refilled at once instead of after a round trip to the database: one
 * more round, and for a receiver that answers fast as many rounds as it clears within half the wait
 * a lease allows (up to two batches in all), so that a burst to one fast receiver is not held up by
 * the claims. It claims again for a receiver once half of what it may hold is gone, if its last
 * claim took all the room it had (else nothing more of it was due, and a notification says when
 * there is: claiming on every answer sent 31 statements for 30 deliveries). A waiting
 * delivery starts within the wait its lease (twice the timeout plus 5 s) leaves beside its attempt
 * and its record; one that waited too long anyway (its receiver slowed down) is left to its lease.
 * Finished attempts are recorded in batches (what finished within `recordDelayMs`, or while the
 * previous statement ran), beside the sending and claiming. Any number of workers (app instances) may share
 * one database; each receiver is sent to by the worker that holds it (see claimDueDeliveries). A number for `limits` is the total bound (the per-endpoint bound is then no larger).
 */
export function startWebhookWorker(db: Database, settings: WebhookSettings, limits: number | Partial<WorkerLimits> = {}): WebhookWorker {
  const { total, perEndpoint, batchSize } = typeof limits === 'number'
    ? { total: limits, perEndpoint: Math.min(limits, defaultWorkerLimits.perEndpoint), batchSize: limits }
    : { ...defaultWorkerLimits, ...limits }
  /** This worker's id in the receivers' holds. */
  const worker = randomUUID()
  /** How long a claimed delivery may wait and still be started (its attempt and record must fit in the lease). */
  const maxWaitMs = settings.leaseSeconds * 1000 - settings.timeoutMs - 3000
  let isStopped = false
  // look at once on start
  let shouldLook = true
  let hasLooked = false
  let wakeSleeper: (() => void) | undefined
  let running = 0
  let waitingCount = 0
  /** target -> deliveries in flight to it */
  const busy = new Map<string, number>()
  /** target -> claimed deliveries not started yet, oldest first */
  const waiting = new Map<string, { delivery: ClaimedDelivery, claimedAt: number }[]>()
  /** target -> how long its attempts take (ms): the slowest recent one, fading by a fifth with each newer one */
  const pace = new Map<string, number>()
  /**
   * The most waiting rounds one receiver may have (in flight and waiting, at most two batches): it
   * claims again when half is gone, so that a refill is a full batch. With one batch at most, the
   * refills of a burst took 50 rows each: twice the claims, each looking at up to `claimScan` rows,
   * on the burst's path (bench:webhooks: 0.32 of a bare sender then, 0.34 to 0.39 now).
   */
  const maxRounds = Math.max(1, Math.floor((2 * batchSize) / perEndpoint) - 1)
  /** What one claim may take for a receiver this worker holds nothing of: one round in flight and one waiting. */
  const newRoom = 2 * perEndpoint
  /** Receivers whose last claim filled all the room it had for them: more of theirs may be due. */
  const mayHaveMore = new Set<string>()
  const finished: FinishedAttempt[] = []
  const sending = new Set<Promise<void>>()
  let recording: Promise<void> | undefined
  let recordTimer: ReturnType<typeof setTimeout> | undefined

  const wake = () => {
    shouldLook = true
    wakeSleeper?.()
  }
  const sleep = () => new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      shouldLook = true
      resolve()
    }, settings.pollIntervalMs)
    wakeSleeper = () => {
      clearTimeout(timer)
      resolve()
    }
  }).finally(() => {
    wakeSleeper = undefined
  })

  const add = (map: Map<string, number>, target: string, change: number) => {
    const count = (map.get(target) ?? 0) + change
    if (count) map.set(target, count)
    else map.delete(target)
  }

  /** Records what has finished: at once when a batch is full or the worker stops, else within `recordDelayMs`. */
  const record = (isUrgent = false) => {
    if (recording || !finished.length) return
    if (!isUrgent && !isStopped && finished.length < batchSize) {
      recordTimer ??= setTimeout(() => {
        recordTimer = undefined
        record(true)
      }, recordDelayMs)
      return
    }
    clearTimeout(recordTimer)
    recordTimer = undefined
    const batch = finished.splice(0)
    recording = recordAttempts(db, batch, settings)
      .catch((error) => {
        // the rows stay `delivering` until their lease runs out; then they are sent again
        log.error(`Could not record ${batch.length} delivery attempt(s)`, { attempts: batch.length, error })
      })
      .finally(() => {
        recording = undefined
        // what finished meanwhile
        record()
      })
  }

  /** How many of a receiver's deliveries this worker may hold (in flight and waiting); one waiting round until it has answered. */
  const depthOf = (target: string) => {
    const ms = pace.get(target)
    const rounds = ms === undefined ? 1 : Math.min(maxRounds, Math.max(1, Math.floor(maxWaitMs / (2 * Math.max(ms, 1)))))
    return perEndpoint * (1 + rounds)
  }
  const heldFor = (target: string) => (busy.get(target) ?? 0) + (waiting.get(target)?.length ?? 0)
  /** Half of what a receiver may hold is gone, and it may have more due: claim more while the rest is sent. */
  const needsRefill = (target: string) => mayHaveMore.has(target) && heldFor(target) <= depthOf(target) / 2
  const anyNeedsRefill = () => {
    for (const target of mayHaveMore) {
      if (needsRefill(target)) return true
    }
    return false
  }

  const start = (delivery: ClaimedDelivery) => {
    running++
    add(busy, delivery.target, 1)
    const attempt: Promise<void> = attemptDelivery(delivery, settings).then((outcome) => {
      finished.push({ delivery, outcome })
      running--
      add(busy, delivery.target, -1)
      pace.set(delivery.target, Math.max(outcome.durationMs, 0.8 * (pace.get(delivery.target) ?? 0)))
      sending.delete(attempt)
      record()
      startWaiting()
      if (needsRefill(delivery.target)) wakeSleeper?.()
    })
    sending.add(attempt)
  }

  /** Starts waiting deliveries while their receiver and the total have room. */
  const startWaiting = () => {
    for (const [target, queue] of waiting) {
      while (queue.length && running < total && (busy.get(target) ?? 0) < perEndpoint) {
        const { delivery, claimedAt } = queue.shift()!
        waitingCount--
        if (Date.now() - claimedAt <= maxWaitMs) start(delivery)
      }
      if (!queue.length) waiting.delete(target)
      if (running >= total) return
    }
  }

  /** target -> how many more of its deliveries the next claim may take, for the receivers held or heard from */
  const roomOf = () => {
    const room = new Map<string, number>()
    for (const target of new Set([...busy.keys(), ...waiting.keys(), ...pace.keys()])) room.set(target, depthOf(target) - heldFor(target))
    return room
  }

  const loop = (async () => {
    while (!isStopped) {
      const free = Math.min(2 * total - running - waitingCount, batchSize)
      if ((shouldLook || anyNeedsRefill()) && free > 0) {
        shouldLook = false
        const room = roomOf()
        let claimed: ClaimedDelivery[] = []
        try {
          claimed = await claimDueDeliveries(db, worker, free, settings.leaseSeconds, newRoom, room)
        }
        catch (error) {
          if (!isStopped) log.error('Could not read the outbox', { error })
        }
        const claimedAt = Date.now()
        const claimedFor = new Map<string, number>()
        for (const delivery of claimed) {
          waiting.set(delivery.target, [...(waiting.get(delivery.target) ?? []), { delivery, claimedAt }])
          waitingCount++
          add(claimedFor, delivery.target, 1)
        }
        // a receiver that got all the room it had may have more due; one that got less has none
        // this worker could take (the rest, if any, is another worker's); a notification or the
        // poll says when there is more
        for (const target of new Set([...room.keys(), ...claimedFor.keys()])) {
          const targetRoom = room.get(target) ?? newRoom
          if (targetRoom <= 0) continue
          if ((claimedFor.get(target) ?? 0) >= targetRoom) mayHaveMore.add(target)
          else mayHaveMore.delete(target)
        }
        startWaiting()
        // a receiver this worker holds nothing of after a claim is forgotten (it starts again from
        // one waiting round), so that the map stays as small as what is held
        for (const target of pace.keys()) {
          if (!heldFor(target)) pace.delete(target)
        }
        // a full batch: there may be more due work
        if (claimed.length === free) shouldLook = true
        if (!hasLooked) {
          hasLooked = true
          log.info(`Delivery worker running (polls every ${settings.pollIntervalMs} ms)`, { pollIntervalMs: settings.pollIntervalMs })
        }
        continue
      }
      await sleep()
    }
    const unstarted = [...waiting.values()].flat().map(({ delivery }) => delivery.id)
    waiting.clear()
    waitingCount = 0
    await releaseDeliveries(db, unstarted)
      .catch(error => log.error('Could not release unsent deliveries', { error }))
    await Promise.all(sending)
    // only now: another worker taking a receiver while this one still sends to it would exceed its bound
    await releaseHolds(db, worker)
      .catch(error => log.error('Could not release held receivers', { error }))
    while (recording || finished.length) {
      record(true)
      await recording
    }
  })()
  return {
    wake,
    async stop() {
      isStopped = true
      wake()
      await loop
      // the kept connections close with the worker
      closeSenderAgents()
    },
  }
}
