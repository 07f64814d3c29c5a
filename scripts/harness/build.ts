import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { outputDir } from './app'
import { pgliteTemplate, serverTemplate } from './database'

const sources = ['app', 'server', 'shared', 'supabase', 'nuxt.config.ts', 'package-lock.json']

function newestSourceTime(path: string): number {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(stat.mtimeMs, ...readdirSync(path).map(name => newestSourceTime(join(path, name))))
}

/**
 * Route tests run the built app: build it when .output is missing or older than the sources. Then
 * the migrated templates that test databases copy are made (once per set of migrations), before
 * any test file asks for one.
 */
export default async function setup() {
  await buildWhenChanged()
  await pgliteTemplate()
  if (process.env.TEST_DATABASE_URL) await serverTemplate()
}

async function buildWhenChanged() {
  const entry = join(outputDir, 'server/index.mjs')
  const lock = `${outputDir}.lock`
  // one build at a time for one output folder (two vitest projects, or vitest and Playwright)
  mkdirSync(dirname(lock), { recursive: true })
  while (true) {
    try {
      mkdirSync(lock)
      break
    }
    catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const age = existsSync(lock) ? Date.now() - statSync(lock).mtimeMs : 0
      if (age > 10 * 60_000) rmSync(lock, { recursive: true, force: true })
      await new Promise(r => setTimeout(r, 1000))
    }
  }
  try {
    const builtAt = existsSync(entry) ? statSync(entry).mtimeMs : 0
    if (builtAt > Math.max(...sources.map(newestSourceTime))) return
    console.info(`[test] Building the app into ${outputDir} (sources changed since the last build)...`)
    execFileSync('npx', ['nuxi', 'build'], { stdio: 'inherit' })
  }
  finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
