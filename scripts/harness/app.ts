import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import pg from 'pg'
import { copyPgliteTemplate, createServerDatabase, databaseKind } from './database'
import { freePort } from './ports'

export interface TestApp {
  /** Base URL of the running app, e.g. http://127.0.0.1:41234 */
  url: string
  /** A pool on the app's own database, for asserting rows (elevated, like the app). */
  db: pg.Pool
  /** Lines the app printed. */
  output: string[]
  /** The connection string of the app's database (a Postgres server's, or the embedded one's socket). */
  databaseUrl: string
  /** The app's process id (for its memory, or to signal it). */
  readonly pid: number
  /** Whether the app's process has exited (it should not, unless killed). */
  readonly hasExited: boolean
  /** Sends a signal to the app (SIGKILL: no chance to clean up) and waits until it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>
  /** Stops the app (unless already killed) and starts it again on the same database. */
  restart(env?: Record<string, string>): Promise<void>
  stop(): Promise<void>
}

export interface StartOptions {
  /** Run on this Postgres database instead of a fresh one (another app's, a private cluster's); it is not dropped on stop. */
  databaseUrl?: string
  /** Flags for node before the app's entry (e.g. --cpu-prof, which NODE_OPTIONS may not carry). */
  nodeArgs?: string[]
  /** A program that runs node, with its arguments (e.g. valgrind's callgrind), and how long it may take to start (60 s). */
  runUnder?: { command: string[], startTimeoutMs?: number }
  /** Start on an empty database, which the app migrates itself (else a copy of the migrated template). */
  emptyDatabase?: boolean
  /** Another build's server entry (a benchmark comparing builds); default: this checkout's build. */
  entry?: string
}

/** One line of the app's log: in production (every test app) one JSON object a line. */
export interface LogLine {
  time: string
  level: string
  tag: string
  message: string
  /** The id of the request the line was written for (its Request-Id), when one was. */
  request_id?: string
  [field: string]: unknown
}

/**
 * The app's output as its log lines, up to the last complete line (one still being written is
 * left for the next call). A line that is not a JSON object fails: production prints nothing else.
 */
export function logLines(app: Pick<TestApp, 'output'>): LogLine[] {
  const text = app.output.join('')
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((line) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    }
    catch {
      throw new Error(`The app printed a line that is not JSON: ${line}`)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`The app printed a line that is not a JSON object: ${line}`)
    return parsed as LogLine
  })
}

export const outputDir = process.env.APP_BUILD_DIR ? `${process.env.APP_BUILD_DIR}/output` : '.output'
const serverEntry = resolve(outputDir, 'server/index.mjs')
export const testSessionPassword = 'test-session-password-0123456789-abcdef'

/**
 * Starts a node process (a server; under `runUnder`'s program when given) and waits until `probe`
 * answers below 500 (`ok`: with a 2xx); it throws with the process's output (the lines it printed,
 * also pushed onto `output`) when the process exits first or is not up within `startTimeoutMs`.
 */
export async function startProcess(args: string[], env: NodeJS.ProcessEnv, probe: string, { ok = false, output = [] as string[], runUnder = [] as string[], startTimeoutMs = 60_000 } = {}): Promise<{ child: ChildProcess, output: string[] }> {
  const [command, ...commandArgs] = [...runUnder, process.execPath, ...args] as [string, ...string[]]
  const child = spawn(command, commandArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout!.on('data', chunk => output.push(String(chunk)))
  child.stderr!.on('data', chunk => output.push(String(chunk)))
  const deadline = Date.now() + startTimeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`The process exited (${child.exitCode}):\n${output.join('')}`)
    try {
      const response = await fetch(probe)
      await response.arrayBuffer()
      if (ok ? response.ok : response.status < 500) return { child, output }
    }
    catch {
      // not listening yet
    }
    await new Promise(r => setTimeout(r, 100))
  }
  child.kill('SIGKILL')
  throw new Error(`The process did not start within ${startTimeoutMs / 1000} s:\n${output.join('')}`)
}

/**
 * Starts the built app (.output) on a fresh database of the current kind, a copy of the migrated
 * template unless `emptyDatabase`: PGlite in a temporary folder (reachable for assertions through
 * its socket), or a new database on TEST_DATABASE_URL.
 */
export async function startApp(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestApp> {
  const kind = options.databaseUrl ? 'postgres' : databaseKind()
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const output: string[] = []
  let dbUrl: string
  let cleanup: () => Promise<void>
  const dbEnv: Record<string, string> = {}
  if (kind === 'pglite') {
    const folder = mkdtempSync(join(tmpdir(), 'tws-test-'))
    const socketPort = await freePort()
    dbEnv.NUXT_PGLITE_DATA_DIR = join(folder, 'db')
    if (!options.emptyDatabase) await copyPgliteTemplate(dbEnv.NUXT_PGLITE_DATA_DIR)
    dbEnv.NUXT_PGLITE_SOCKET_PORT = String(socketPort)
    dbUrl = `postgres://postgres@127.0.0.1:${socketPort}/postgres`
    cleanup = async () => rmSync(folder, { recursive: true, force: true })
  }
  else if (options.databaseUrl) {
    dbEnv.NUXT_DATABASE_URL = options.databaseUrl
    dbUrl = options.databaseUrl
    cleanup = async () => {}
  }
  else {
    const server = await createServerDatabase({ empty: options.emptyDatabase })
    dbEnv.NUXT_DATABASE_URL = server.url
    dbUrl = server.url
    cleanup = server.drop
  }

  let child: ChildProcess | undefined
  let extraEnv = env
  const launch = async () => {
    const env = {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      NUXT_SESSION_PASSWORD: testSessionPassword,
      NUXT_SEED_DEMO: 'false',
      NUXT_BASE_URL: url,
      ...dbEnv,
      ...extraEnv,
    }
    child = (await startProcess([...(options.nodeArgs ?? []), options.entry ?? serverEntry], env, `${url}/api/health`,
      { ok: true, output, runUnder: options.runUnder?.command, startTimeoutMs: options.runUnder?.startTimeoutMs })).child
  }
  const kill = (signal: NodeJS.Signals = 'SIGTERM') => new Promise<void>((done) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return done()
    child.once('exit', () => done())
    child.kill(signal)
  })

  try {
    await launch()
  }
  catch (error) {
    await kill()
    await cleanup()
    throw error
  }
  // the test's own pool on the app's database: a connection lost when the app or server is killed is dropped, not fatal
  const openPool = () => {
    const pool = new pg.Pool({ connectionString: dbUrl, max: kind === 'pglite' ? 1 : 4 })
    pool.on('error', () => {})
    return pool
  }
  let db = openPool()
  return {
    url,
    output,
    databaseUrl: dbUrl,
    get db() {
      return db
    },
    get pid() {
      return child!.pid!
    },
    get hasExited() {
      return child!.exitCode !== null || child!.signalCode !== null
    },
    kill,
    async restart(env2 = {}) {
      await db.end()
      await kill()
      extraEnv = { ...extraEnv, ...env2 }
      await launch()
      db = openPool()
    },
    async stop() {
      await db.end().catch(() => {})
      await kill()
      await cleanup()
    },
  }
}
