import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import pg from 'pg'

/**
 * What a bench run starts from: the built app's entry (APP_BUILD_DIR is honoured) and a fresh
 * database on the Postgres server at `serverUrl`, named `tws_bench_<random>`, for the run to drop.
 */
export async function benchDatabase(serverUrl: string): Promise<{ entry: string, name: string, databaseUrl: string }> {
  const outputDir = process.env.APP_BUILD_DIR ? `${process.env.APP_BUILD_DIR}/output` : '.output'
  const entry = resolve(outputDir, 'server/index.mjs')
  if (!existsSync(entry)) throw new Error(`No built app at ${entry}: run npm run build first (APP_BUILD_DIR is honoured).`)
  const name = `tws_bench_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { entry, name, databaseUrl: url.toString() }
}
