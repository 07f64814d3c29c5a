import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './ports'
import { waitFor } from './wait'

export const pgbouncerPath = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer'

export interface Pgbouncer {
  /** The database's connection string through the pooler, e.g. postgres://postgres@127.0.0.1:41234/tws_test_… */
  url: string
  /** What PgBouncer logged (for a failing test's message). */
  log(): string
  stop(): Promise<void>
}

export interface PgbouncerOptions {
  /** Server connections per user and database (PgBouncer's default_pool_size); default 4. */
  poolSize?: number
  /** The roles that may log in through it (trust: no password asked); default postgres and the chat's chat_gateway. */
  users?: string[]
}

/** The uid and gid of the postgres account: PgBouncer refuses to run as root and is started as that user. */
function postgresAccount(): { uid: number, gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/**
 * Starts Debian's PgBouncer in transaction mode (the mode of hosted poolers such as Supabase's) in
 * front of one database of `databaseUrl`'s server, on a free port of 127.0.0.1, and waits until it
 * answers a query. Each client transaction may run on a different server connection: prepared
 * statements and session settings do not survive from one transaction to the next.
 */
export async function startPgbouncer(databaseUrl: string, options: PgbouncerOptions = {}): Promise<Pgbouncer> {
  const upstream = new URL(databaseUrl)
  const database = decodeURIComponent(upstream.pathname.slice(1))
  const port = await freePort()
  const folder = mkdtempSync(join(tmpdir(), 'tws-pgbouncer-'))
  const users = options.users ?? ['postgres', 'chat_gateway']
  const logFile = join(folder, 'pgbouncer.log')
  writeFileSync(join(folder, 'userlist.txt'), users.map(user => `"${user}" ""\n`).join(''))
  writeFileSync(join(folder, 'pgbouncer.ini'), [
    '[databases]',
    `${database} = host=${upstream.hostname} port=${upstream.port || 5432} dbname=${database}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    // no Unix socket: several PgBouncers on one machine would collide in /tmp
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(folder, 'userlist.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${options.poolSize ?? 4}`,
    'max_client_conn = 500',
    `logfile = ${logFile}`,
    'ignore_startup_parameters = extra_float_digits,options',
    '',
  ].join('\n'))
  const isRoot = process.getuid?.() === 0
  if (isRoot) {
    const { uid, gid } = postgresAccount()
    for (const path of [folder, join(folder, 'userlist.txt'), join(folder, 'pgbouncer.ini')]) chownSync(path, uid, gid)
  }
  const output: string[] = []
  const log = () => {
    let written = ''
    try {
      written = readFileSync(logFile, 'utf8')
    }
    catch {
      // not written yet
    }
    return `${output.join('')}${written}`
  }
  const child: ChildProcess = spawn(pgbouncerPath, [...(isRoot ? ['-u', 'postgres'] : []), join(folder, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout!.on('data', chunk => output.push(String(chunk)))
  child.stderr!.on('data', chunk => output.push(String(chunk)))
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve)
    child.once('error', reject)
  })
  const url = new URL(databaseUrl)
  url.hostname = '127.0.0.1'
  url.port = String(port)
  const stop = () => new Promise<void>((done) => {
    const finish = () => {
      rmSync(folder, { recursive: true, force: true })
      done()
    }
    if (child.exitCode !== null || child.signalCode !== null) return finish()
    child.once('exit', finish)
    // SIGTERM: immediate shutdown, without waiting for clients to disconnect
    child.kill('SIGTERM')
  })
  try {
    await spawned
    await waitFor('PgBouncer to accept connections', async () => {
      if (child.exitCode !== null) throw new Error(`PgBouncer exited (${child.exitCode}):\n${log()}`)
      const client = new pg.Client({ connectionString: url.toString() })
      client.on('error', () => {})
      try {
        await client.connect()
        await client.query('select 1')
        return true
      }
      catch {
        return false
      }
      finally {
        await client.end().catch(() => {})
      }
    }, { timeoutMs: 15_000, intervalMs: 100 })
  }
  catch (error) {
    await stop()
    throw new Error(`${(error as Error).message}\n${log()}`, { cause: error })
  }
  return { url: url.toString(), log, stop }
}
