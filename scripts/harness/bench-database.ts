import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import pg from 'pg'
import { outputDir } from './app'

/**
 * What a bench run starts from: a built app (`entry`, by default this build's: APP_BUILD_DIR is
 * honoured) and a fresh database on the Postgres server at `serverUrl`, named `tws_bench_<random>`,
 * which `drop()` drops at the end of the run (unless BENCH_KEEP_DATABASE is set: then it says where
 * the database is kept).
 */
export async function benchDatabase(serverUrl: string, entry = resolve(outputDir, 'server/index.mjs')): Promise<{ name: string, databaseUrl: string, drop: () => Promise<void> }> {
  if (!existsSync(entry)) throw new Error(`No built app at ${entry}: run npm run build first (APP_BUILD_DIR is honoured).`)
  const name = `tws_bench_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const databaseUrl = url.toString()
  const drop = async () => {
    if (process.env.BENCH_KEEP_DATABASE) {
      console.info(`[bench] kept the database ${databaseUrl} (BENCH_KEEP_DATABASE)`)
      return
    }
    const cleanup = new pg.Client({ connectionString: serverUrl })
    await cleanup.connect()
    await cleanup.query(`drop database if exists ${name} with (force)`)
    await cleanup.end()
  }
  return { name, databaseUrl, drop }
}
