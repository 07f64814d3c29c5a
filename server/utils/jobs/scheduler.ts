// The app's periodic work, in one place: each job runs at start (unless told otherwise) and then
// `everyMs` after its previous run ended, so a run never overlaps the one before it. A job with a
// `lockKey` runs on one instance at a time: every instance tries, on Postgres, a transaction-level
// advisory lock of the key (pg_try_advisory_xact_lock(hashtext(key))) in a transaction held open
// for the run, and an instance that does not get it skips that turn. The lock is the session's
// while the run lasts and goes with the transaction (commit, or the connection lost with a crashed
// process), through a transaction-mode pooler too. On the embedded PGlite there is one process:
// the lock is always taken (a transaction held open there would stop every other statement). A
// failed run is logged and the next one comes at its time. Every job stops when the process is
// asked to stop (server/utils/shutdown.ts), unless its owner stops it, and its timers never keep
// the process alive.
import { useDb } from '../db/database'
import { logger } from '../log/logger'
import { endOnShutdown } from '../shutdown'

const log = logger('jobs')

export interface JobOptions {
  /** The job's name, in its log lines. */
  name: string
  /** The time from the end of one run to the start of the next. */
  everyMs: number
  /** The advisory lock's key: with it, one instance at a time runs the job. */
  lockKey?: string
  /** Whether the first run is at once (default) or after `everyMs`. */
  runAtStart?: boolean
  run: () => Promise<unknown> | unknown
  /**
   * Whether the job stops as soon as the process is asked to stop (default). False for a job whose
   * owner stops it later itself (the API log's flush goes on while open requests end).
   */
  stopsOnSignal?: boolean
}

export interface Job {
  /** Runs the job now (after the run under way, if any); answers whether it ran (false: another instance held the lock, or it is stopped). */
  runNow(): Promise<boolean>
  /** Stops the job: no run starts any more; answers when the run under way (if any) has ended. */
  stop(): Promise<void>
}

/** Runs `run` holding the lock of `key`, or answers false at once when another instance holds it. */
async function underLock(key: string, run: () => Promise<unknown> | unknown): Promise<boolean> {
  const db = await useDb()
  if (db.kind === 'pglite') {
    await run()
    return true
  }
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ taken: boolean }>('select pg_try_advisory_xact_lock(hashtext($1)) as taken', [key])
    if (!rows[0]?.taken) return false
    await run()
    return true
  })
}

/** Starts a periodic job. */
export function schedule(options: JobOptions): Job {
  const { name, everyMs, lockKey } = options
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<boolean> | undefined
  let isStopped = false
  let wasLocked = false

  const once = async (): Promise<boolean> => {
    // the run's own time, inside the lock
    let started = 0
    let ended = 0
    const run = async () => {
      started = Date.now()
      await options.run()
      ended = Date.now()
    }
    try {
      const ran = lockKey ? await underLock(lockKey, run) : (await run(), true)
      // said once per stretch, not at every turn
      if (!ran && !wasLocked) log.info(`Another instance is running ${name}; this one waits`, { job: name })
      wasLocked = !ran
      if (ran) log.debug(`Ran ${name}`, { job: name, started: new Date(started).toISOString(), ms: ended - started })
      return ran
    }
    catch (error) {
      log.error(`The job ${name} failed`, { job: name, error })
      return false
    }
  }
  const next = () => {
    if (isStopped) return
    clearTimeout(timer)
    timer = setTimeout(() => void runNow(), everyMs)
    timer.unref()
  }
  const runNow = (): Promise<boolean> => {
    if (isStopped) return Promise.resolve(false)
    // a run asked for while one is under way comes after it
    const previous = running ?? Promise.resolve(false)
    const current: Promise<boolean> = previous.then(() => isStopped ? false : once()).finally(() => {
      if (running === current) running = undefined
      next()
    })
    running = current
    return current
  }
  const job: Job = {
    runNow,
    async stop() {
      isStopped = true
      clearTimeout(timer)
      forget()
      await running
    },
  }
  const forget = options.stopsOnSignal === false ? () => {} : endOnShutdown(() => void job.stop())
  if (options.runAtStart === false) next()
  else void runNow()
  return job
}
