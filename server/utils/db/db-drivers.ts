import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite'
import pg from 'pg'
import { logger } from '../log/logger'

const log = logger('db')

export interface QueryResult<T> {
  rows: T[]
  rowCount: number
  /** The columns' names in order (with `arrayRows`, where each row is an array of their values). */
  fields?: string[]
}

export interface QueryOptions {
  /**
   * Keep the statement prepared on each connection and reuse its plan (a server's named statement).
   * Only for the app's own statements, whose texts are few; never for SQL written by a user or model.
   */
  prepare?: boolean
  /**
   * Answer timestamptz values as the ISO-8601 text JSON would give their Date (UTC, milliseconds)
   * rather than as Date objects: for rows that go straight into an answer, where building a Date
   * per value only for JSON to print it again is most of the cost of a page's timestamps.
   */
  isoTimestamps?: boolean
  /** Answer each row as an array of its values, in the order of `fields` (no object per row). */
  arrayRows?: boolean
}

/** Anything that runs one parameterised statement. */
export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>>
  /** Runs a script of several statements without parameters (migrations, seed). */
  exec(sql: string): Promise<void>
}

/** Connections of a node-postgres pool: open, idle among them, and queries waiting for one. */
export interface PoolUse {
  total: number
  idle: number
  waiting: number
}

/** One interface over PGlite and node-postgres. */
export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres'
  /** The embedded instance itself (PGlite only), e.g. to serve it on a socket. */
  readonly pglite?: PGlite
  /** The pool's connections now (Postgres only). */
  poolUse?(): PoolUse
  /**
   * Runs one of the app's own short statements in the same round trip as the next statement this
   * process sends (in its own transaction, answered before it), or alone once the current turn of
   * the event loop has passed without one. `onSend` runs when it is taken to be sent (whatever
   * has to see a commit made after that needs another ride). Where statements cannot share a
   * round trip (PGlite, a transaction-mode pooler) it is sent alone at once.
   */
  ride<T = Record<string, unknown>>(text: string, params: unknown[], onSend?: () => void): Promise<QueryResult<T>>
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  close(): Promise<void>
}

export interface DatabaseOptions {
  /** A Postgres connection string; when absent the embedded PGlite is used. */
  url?: string
  /** PGlite data folder, or `memory://`. */
  dataDir?: string
  /** Pool size for node-postgres. */
  max?: number
  /**
   * Whether `prepare` queries use named statements (default true). Off behind a transaction-mode
   * pooler: a named statement lives on one server connection, and the pooler may send the next
   * transaction to another, which answers "prepared statement does not exist".
   */
  prepare?: boolean
}

/** The most distinct statements one process keeps prepared; texts beyond it run unprepared. */
const maxPreparedTexts = 1000
/** A prepared plan that no longer fits the table (a migration changed it): run that text unprepared from then on. */
const isStalePlan = (error: unknown) => /cached plan must not change result type/.test((error as Error | null)?.message ?? '')

// Both drivers answer with the same JS types: int8 as number, date as 'YYYY-MM-DD'.
const INT8 = 20
const DATE = 1082
pg.types.setTypeParser(INT8, value => Number(value))
pg.types.setTypeParser(DATE, value => value)

const TIMESTAMPTZ = 1184
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ) as (text: string) => unknown
/** The form Postgres prints a timestamptz in a UTC session: '2026-11-25 08:29:45.588207+00'. */
const utcTimestamp = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:(\.\d{1,6}))?\+00$/

/**
 * A timestamptz's text as JSON.stringify prints the Date that pg would make of it: the same
 * milliseconds (the fraction's first three digits, as pg's parser truncates them). Any other form
 * (another zone, a year before 1000 or BC, infinity) goes through pg's parser as before.
 */
export function isoTimestamp(text: string): unknown {
  const match = utcTimestamp.exec(text)
  if (!match) {
    const value = parseTimestamptz(text)
    return value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : value
  }
  const ms = match[3] ? String(Math.trunc(1000 * Number.parseFloat(match[3]))).padStart(3, '0') : '000'
  return `${match[1]}T${match[2]}.${ms}Z`
}

/** pg's type parsers with timestamptz as ISO text (QueryOptions.isoTimestamps). */
const isoTimestampTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => oid === TIMESTAMPTZ ? isoTimestamp : pg.types.getTypeParser(oid, format),
}

/** What QueryOptions ask of a pg query besides its text, values and name. */
function pgQueryOptions(options: QueryOptions | undefined): { types?: typeof isoTimestampTypes, rowMode?: 'array' } {
  return { types: options?.isoTimestamps ? isoTimestampTypes : undefined, rowMode: options?.arrayRows ? 'array' : undefined }
}

/** A statement waiting to ride with the next one (Database.ride). */
interface Rider {
  text: string
  params: unknown[]
  onSend?: () => void
  resolve: (result: pg.QueryResult) => void
  reject: (error: unknown) => void
}

/** What a pg query answers, as this module's QueryResult. */
function queryResult<T>(result: pg.QueryResult, options: QueryOptions | undefined): QueryResult<T> {
  return { rows: result.rows as T[], rowCount: result.rowCount ?? result.rows.length, fields: options?.arrayRows ? result.fields.map(field => field.name) : undefined }
}

function createPostgres(url: string, max: number, prepare: boolean): Database {
  // a connection attempt that hangs (server unreachable) fails after 10 s instead of waiting forever
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 10_000 })
  pool.on('error', error => log.error('An idle client failed', { error }))
  // statement names by text: planning is most of the cost of the app's short statements
  const names = new Map<string, string | null>()
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text)
    if (name === undefined) {
      name = names.size < maxPreparedTexts ? `tws_${createHash('sha1').update(text).digest('hex').slice(0, 20)}` : null
      names.set(text, name)
    }
    return name ?? undefined
  }
  const wrap = (client: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(text: string, params?: unknown[], options?: QueryOptions) {
      const name = prepare && options?.prepare ? nameOf(text) : undefined
      let result
      try {
        result = await client.query({ text, values: params, name, ...pgQueryOptions(options) })
      }
      catch (error) {
        if (!name || !isStalePlan(error)) throw error
        names.set(text, null)
        result = await client.query({ text, values: params, ...pgQueryOptions(options) })
      }
      return queryResult<T>(result, options)
    },
    async exec(sql: string) {
      await client.query(sql)
    },
  })

  // Riders: statements sent in the same round trip as the next pool statement, written before it
  // on one connection in pg's pipeline mode (each its own transaction with its own Sync), so that
  // a slow statement never delays them. Named statements are the sign of a direct connection: a
  // transaction-mode pooler may hand each transaction of a pipeline to another server connection.
  let riders: Rider[] = []
  let aloneTimer: NodeJS.Immediate | undefined
  const riderQuery = (rider: Rider): pg.QueryConfig => ({ text: rider.text, values: rider.params, name: prepare ? nameOf(rider.text) : undefined })
  const takeRiders = (): Rider[] => {
    const taken = riders
    riders = []
    if (aloneTimer) clearImmediate(aloneTimer)
    aloneTimer = undefined
    for (const rider of taken) rider.onSend?.()
    return taken
  }
  const sendAlone = () => {
    aloneTimer = undefined
    for (const rider of takeRiders()) pool.query(riderQuery(rider)).then(rider.resolve, rider.reject)
  }
  const pooled = wrap(pool)
  /** The pool's statement with the riders waiting now written before it, all in one write on one connection. */
  async function queryWithRiders<T>(text: string, params: unknown[] | undefined, options: QueryOptions | undefined): Promise<QueryResult<T>> {
    const taken = takeRiders()
    let client: pg.PoolClient
    try {
      client = await pool.connect()
    }
    catch (error) {
      for (const rider of taken) rider.reject(error)
      throw error
    }
    const onLost = (error: Error) => log.error('Connection lost', { error })
    client.on('error', onLost)
    const name = prepare && options?.prepare ? nameOf(text) : undefined
    const stream = (client as unknown as { connection: { stream: { cork(): void, uncork(): void } } }).connection.stream
    const pipelined = client as pg.PoolClient & { pipeline: boolean }
    pipelined.pipeline = true
    stream.cork()
    let sent: Promise<pg.QueryResult>[]
    try {
      // each answered as its result arrives: the riders first, whatever the statement costs
      sent = taken.map((rider) => {
        const result = client.query(riderQuery(rider))
        result.then(rider.resolve, rider.reject)
        return result
      })
      sent.push(client.query({ text, values: params, name, ...pgQueryOptions(options) }))
    }
    finally {
      stream.uncork()
    }
    void Promise.allSettled(sent).then((outcomes) => {
      pipelined.pipeline = false
      client.off('error', onLost)
      // as pool.query does: a connection that answered an error is not reused
      client.release(outcomes.some(outcome => outcome.status === 'rejected') || undefined)
    })
    try {
      return queryResult<T>(await sent[sent.length - 1]!, options)
    }
    catch (error) {
      // a plan the table outgrew: the usual path runs the text unprepared from now on
      if (name && isStalePlan(error)) return pooled.query<T>(text, params, options)
      throw error
    }
  }

  return {
    kind: 'postgres',
    query: (text, params, options) => riders.length ? queryWithRiders(text, params, options) : pooled.query(text, params, options),
    exec: pooled.exec,
    ride<T>(text: string, params: unknown[], onSend?: () => void) {
      if (!prepare) {
        onSend?.()
        return pooled.query<T>(text, params)
      }
      return new Promise<QueryResult<T>>((resolve, reject) => {
        riders.push({ text, params, onSend, resolve: result => resolve(queryResult<T>(result, undefined)), reject })
        aloneTimer ??= setImmediate(sendAlone)
      })
    },
    poolUse: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async transaction(fn) {
      const client = await pool.connect()
      // a checked-out client has no pool listener: without one, the server going away between two
      // statements would be an unhandled 'error' event, which ends the process
      const onLost = (error: Error) => log.error('Connection lost', { error })
      client.on('error', onLost)
      let isBroken = false
      try {
        await client.query('begin')
        const result = await fn(wrap(client))
        await client.query('commit')
        return result
      }
      catch (error) {
        await client.query('rollback').catch(() => {
          isBroken = true
        })
        throw error
      }
      finally {
        client.off('error', onLost)
        // a connection that cannot even roll back is discarded, not handed to the next request
        client.release(isBroken || undefined)
      }
    },
    close: () => pool.end(),
  }
}

function createPglite(dataDir: string): Database {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true })
  const pglite = new PGlite(dataDir, {
    parsers: { [pgliteTypes.INT8]: (value: string) => Number(value), [pgliteTypes.DATE]: (value: string) => value },
  })
  const wrap = (client: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    // PGlite runs in this process: there is no round trip to save, so `prepare` changes nothing
    async query<T>(text: string, params?: unknown[], options?: QueryOptions) {
      const result = await client.query<T>(text, params, {
        ...(options?.isoTimestamps ? { parsers: { [TIMESTAMPTZ]: isoTimestamp } } : {}),
        ...(options?.arrayRows ? { rowMode: 'array' as const } : {}),
      })
      // a statement that returns rows counts them; PGlite's affectedRows is 0 for a select
      return {
        rows: result.rows,
        rowCount: result.fields.length ? result.rows.length : (result.affectedRows ?? 0),
        fields: options?.arrayRows ? result.fields.map(field => field.name) : undefined,
      }
    },
    async exec(sql: string) {
      await client.exec(sql)
    },
  })
  const base = wrap(pglite)
  return {
    kind: 'pglite',
    pglite,
    ...base,
    // in this process, there is no round trip to share
    ride(text, params, onSend) {
      onSend?.()
      return base.query(text, params)
    },
    transaction: fn => pglite.transaction(tx => fn(wrap(tx))),
    close: () => pglite.close(),
  }
}

/** Opens the database the options name: a Postgres server for `url`, else PGlite in `dataDir`. */
export function createDatabase(options: DatabaseOptions): Database {
  if (options.url) return createPostgres(options.url, options.max ?? 10, options.prepare ?? true)
  return createPglite(options.dataDir ?? '.data/db')
}

const connectionErrorCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
const connectionErrorMessages = /Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Cannot use a pool after calling end/i

/**
 * Whether an error means the database cannot be reached right now (refused or lost connection,
 * server shutting down or starting up: SQLSTATE classes 08 and 57P), as opposed to a bad statement.
 */
export function isConnectionError(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, message, cause } = current as { code?: unknown, message?: unknown, cause?: unknown }
    if (typeof code === 'string' && (connectionErrorCodes.has(code) || code.startsWith('08') || code.startsWith('57P'))) return true
    if (typeof message === 'string' && connectionErrorMessages.test(message)) return true
    if (current instanceof AggregateError && current.errors.some(isConnectionError)) return true
    current = cause
  }
  return false
}

/** Whether a database error is a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505'
}
