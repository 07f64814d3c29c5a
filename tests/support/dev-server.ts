import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './ports'
import { waitFor } from './wait'

export interface DevServer {
  url: string
  /** What the dev server printed so far. */
  output: string[]
  /** Its own folder: the embedded database, and Vite's dependency cache when asked for. */
  folder: string
  stop: () => Promise<void>
}

/**
 * Starts `nuxt dev` as `npm run dev` does (the embedded database, seeded), in a folder of its own,
 * on a free port; with `freshCache`, with an empty Vite dependency cache, as a first run has.
 */
export async function startDevServer(options: { freshCache?: boolean } = {}): Promise<DevServer> {
  const folder = mkdtempSync(join(tmpdir(), 'tws-dev-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const output: string[] = []
  const child = spawn(process.execPath, ['node_modules/nuxt/bin/nuxt.mjs', 'dev', '--port', String(port), '--host', '127.0.0.1'], {
    env: {
      ...process.env,
      NODE_ENV: 'development',
      NUXT_PGLITE_DATA_DIR: join(folder, 'db'),
      NUXT_PGLITE_SOCKET_PORT: '',
      ...(options.freshCache ? { NUXT_VITE_CACHE_DIR: join(folder, 'vite') } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // its own process group: stopping it stops the Nitro worker it starts too
    detached: true,
  })
  child.stdout!.on('data', chunk => output.push(String(chunk)))
  child.stderr!.on('data', chunk => output.push(String(chunk)))
  const stop = async () => {
    if (child.pid && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise(resolve => child.once('exit', resolve))
      process.kill(-child.pid, 'SIGTERM')
      await exited
    }
    rmSync(folder, { recursive: true, force: true })
  }
  try {
    await waitFor('the dev server to answer /api/health', async () => {
      if (child.exitCode !== null) throw new Error(`nuxt dev exited (${child.exitCode}):\n${output.join('')}`)
      return (await fetch(`${url}/api/health`).catch(() => null))?.ok
    }, { timeoutMs: 240_000, intervalMs: 250 })
  }
  catch (error) {
    await stop()
    throw error
  }
  return { url, output, folder, stop }
}
