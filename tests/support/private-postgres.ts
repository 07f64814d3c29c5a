import { execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './ports'

const run = promisify(execFile)
const binDir = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin'

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string
  port: number
  /** Stops the server at once, as a crash would (`pg_ctl stop -m immediate`): no clean shutdown. */
  crash(): Promise<void>
  /** Starts the server again on the same data folder and port. */
  start(): Promise<void>
  /** Stops the server and deletes its folder. */
  destroy(): Promise<void>
}

/** Runs a Postgres program as the `postgres` OS user when we are root (initdb and postgres refuse root). */
function pg(program: string, args: string[]) {
  const command = join(binDir, program)
  if (process.getuid?.() === 0) return run('runuser', ['-u', 'postgres', '--', command, ...args])
  return run(command, args)
}

/**
 * A Postgres cluster of this test's own, in a temporary folder on a free port (trust
 * authentication on 127.0.0.1), to stop and start without disturbing the machine's server.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const folder = mkdtempSync(join(tmpdir(), 'tws-pg-'))
  chmodSync(folder, 0o777)
  const dataDir = join(folder, 'data')
  const port = await freePort()
  await pg('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`
  const start = async () => {
    await pg('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(folder, 'log'), '-w', '-t', '60', 'start'])
  }
  const stop = (mode: 'immediate' | 'fast') => pg('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop'])
  await start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    crash: async () => {
      await stop('immediate')
    },
    start,
    async destroy() {
      await stop('fast').catch(() => {})
      rmSync(folder, { recursive: true, force: true })
    },
  }
}
