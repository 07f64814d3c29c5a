import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createDatabase, type Database } from '../../server/utils/db'
import { runMigrations } from '../../server/utils/migrations'
import { loadMigrationFiles } from '../../scripts/load-migrations'

export type DatabaseKind = 'pglite' | 'postgres'

/** The database the current vitest project targets. */
export function databaseKind(): DatabaseKind {
  return process.env.TEST_DB_KIND === 'postgres' ? 'postgres' : 'pglite'
}

function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL
  if (!url) throw new Error('TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/postgres)')
  return url
}

/** Creates an empty database on the Postgres server and returns its URL and a dropper. */
export async function createServerDatabase(): Promise<{ url: string, drop: () => Promise<void> }> {
  const name = `tws_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl() })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(serverUrl())
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl() })
      await client.connect()
      await client.query(`drop database if exists ${name} with (force)`)
      await client.end()
    },
  }
}

/** A fresh, migrated database of the current kind, opened in this process (PGlite in memory). */
export async function freshDatabase(): Promise<{ db: Database, close: () => Promise<void> }> {
  if (databaseKind() === 'pglite') {
    const db = createDatabase({ dataDir: 'memory://' })
    await runMigrations(db, loadMigrationFiles())
    return { db, close: () => db.close() }
  }
  const server = await createServerDatabase()
  const db = createDatabase({ url: server.url, max: 4 })
  await runMigrations(db, loadMigrationFiles())
  return {
    db,
    async close() {
      await db.close()
      await server.drop()
    },
  }
}
