import pg from 'pg'
import { defineCounter } from '../metrics'
import { setting } from '../settings'
import { useDb } from './database'
import { logger } from '../log/logger'
import { schedule, type Job } from '../jobs/scheduler'

const log = logger('notifications')

/**
 * One LISTEN connection per process. On Postgres it is a dedicated client on the direct connection
 * (DATABASE_DIRECT_URL, else DATABASE_URL): a pooler in transaction mode cannot keep a LISTEN, and a
 * pooled connection would be handed to other statements. When the connection ends or errors it is
 * opened again with backoff (100 ms doubling to 2 s); consumers hear of the loss and of the
 * reconnection through onReconnect, because notifications sent meanwhile are lost. On the embedded
 * PGlite the database's own listen is used: one process, nothing to lose.
 */

const notificationReconnects = defineCounter('notification_reconnects_total', 'Times the LISTEN connection was opened again after it was lost')

type NotificationHandler = (payload: string) => void

const handlers = new Map<string, Set<NotificationHandler>>()
const reconnectHandlers = new Set<() => void>()
/** The name the listening connection shows in pg_stat_activity (tests terminate it by this name). */
export const notificationsApplicationName = 'tws-listen'
const firstBackoffMs = 100
const maxBackoffMs = 2_000
const pingIntervalMs = 1_000
/** A connection that has not answered a ping for this long is taken as lost. */
const pingTimeoutMs = 3_000

let client: pg.Client | undefined
let isHealthy = false
let isStopped = false
let started: Promise<void> | undefined
let backoffMs = firstBackoffMs
let retryTimer: ReturnType<typeof setTimeout> | undefined
let pingJob: Job | undefined
let lastAnswerAt = 0
/** Channels already listened to on PGlite (its listen is per channel). */
const pgliteChannels = new Set<string>()

const directUrl = () => setting('databaseDirectUrl') || setting('databaseUrl')

function identifier(channel: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`Not a channel name: ${channel}`)
  return channel
}

function dispatch(channel: string, payload: string) {
  for (const handler of handlers.get(channel) ?? []) {
    try {
      handler(payload)
    }
    catch (error) {
      log.error(`A handler of ${channel} failed`, { channel, error })
    }
  }
}

function tellReconnect() {
  for (const handler of reconnectHandlers) {
    try {
      handler()
    }
    catch (error) {
      log.error('A reconnect handler failed', { error })
    }
  }
}

/** The connection `lostClient` is gone: tell the consumers, and open a new one after the backoff. */
function lose(lostClient: pg.Client) {
  if (client !== lostClient) return
  client = undefined
  isHealthy = false
  void pingJob?.stop()
  lostClient.end().catch(() => {})
  tellReconnect()
  scheduleConnect()
}

function scheduleConnect() {
  if (isStopped || retryTimer) return
  const delay = backoffMs
  backoffMs = Math.min(backoffMs * 2, maxBackoffMs)
  retryTimer = setTimeout(() => {
    retryTimer = undefined
    void connect(true)
  }, delay)
  retryTimer.unref()
}

async function connect(isReconnect: boolean): Promise<void> {
  const next = new pg.Client({ connectionString: directUrl(), application_name: notificationsApplicationName, connectionTimeoutMillis: 10_000, keepAlive: true })
  next.on('notification', message => dispatch(message.channel, message.payload ?? ''))
  next.on('error', () => lose(next))
  next.on('end', () => lose(next))
  try {
    await next.connect()
    for (const channel of handlers.keys()) await next.query(`listen ${identifier(channel)}`)
  }
  catch (error) {
    next.removeAllListeners('end')
    next.removeAllListeners('error')
    next.on('error', () => {})
    next.end().catch(() => {})
    if (!isStopped) log.error('Could not listen', { error })
    scheduleConnect()
    return
  }
  if (isStopped) {
    await next.end().catch(() => {})
    return
  }
  client = next
  isHealthy = true
  backoffMs = firstBackoffMs
  lastAnswerAt = Date.now()
  pingJob = schedule({ name: 'notification-ping', everyMs: pingIntervalMs, runAtStart: false, stopsOnSignal: false, run: () => ping(next) })
  if (isReconnect) {
    notificationReconnects().inc()
    log.info('Listening again')
    tellReconnect()
  }
}

/** A connection that hangs without closing (a network cut) is found by its unanswered pings. */
function ping(pinged: pg.Client) {
  if (client !== pinged) return
  if (Date.now() - lastAnswerAt > pingTimeoutMs) {
    log.error('The listening connection stopped answering')
    lose(pinged)
    return
  }
  pinged.query('select 1').then(() => {
    lastAnswerAt = Date.now()
  }, () => lose(pinged))
}

function start(): Promise<void> {
  // the connection outlives the request that first listens: its lines are no request's
  started ??= directUrl() ? connect(false) : Promise.resolve()
  return started
}

/**
 * Calls `handler` with the payload of every notification on `channel` (several handlers may share
 * a channel). Resolves once the channel is listened to, or, while the connection is down, once it
 * is registered for the next connection.
 */
export async function listen(channel: string, handler: NotificationHandler): Promise<void> {
  identifier(channel)
  let channelHandlers = handlers.get(channel)
  const isNewChannel = !channelHandlers
  if (!channelHandlers) handlers.set(channel, channelHandlers = new Set())
  channelHandlers.add(handler)
  if (!directUrl()) {
    const db = await useDb()
    if (db.pglite && !pgliteChannels.has(channel)) {
      pgliteChannels.add(channel)
      await db.pglite.listen(channel, payload => dispatch(channel, payload))
    }
    return
  }
  await start()
  // a channel added after the connection opened is listened to now; a reconnection listens to all
  if (isNewChannel && client) await client.query(`listen ${identifier(channel)}`).catch(() => {})
}

/**
 * Calls `handler` when the listening connection is lost and again when it is listening once more:
 * notifications may have been missed in between, so consumers drop what they cached.
 */
export function onReconnect(handler: () => void): void {
  reconnectHandlers.add(handler)
}

/** Whether notifications arrive right now: connected and listening (always on the embedded database). */
export function notificationsHealthy(): boolean {
  if (!directUrl()) return true
  return isHealthy && Date.now() - lastAnswerAt <= pingTimeoutMs
}

/** Closes the listening connection for good (the server is closing). */
export async function stopNotifications(): Promise<void> {
  isStopped = true
  clearTimeout(retryTimer)
  void pingJob?.stop()
  const current = client
  client = undefined
  isHealthy = false
  if (current) {
    current.removeAllListeners('end')
    await current.end().catch(() => {})
  }
}
