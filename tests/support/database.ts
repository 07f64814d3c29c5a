import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createDatabase, type Database, type Queryable } from '../../server/utils/db-drivers'
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

/** Inserts an account and its profile directly (as a fixture for database-level tests); returns its id. */
export async function makeUser(db: Queryable, name: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>('insert into auth.users (email) values ($1) returning id', [`${name}@example.com`])
  await db.query('insert into public.profiles (id, email, name) values ($1, $2, $3)', [rows[0]!.id, `${name}@example.com`, name])
  return rows[0]!.id
}

/** Runs `fn` as Supabase's `authenticated` role with the JWT claims of `userId`, inside a transaction. */
export async function asUser<T>(db: Database, userId: string, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query('set local role authenticated')
    await tx.query(`select set_config('request.jwt.claims', $1, true)`, [JSON.stringify({ sub: userId, role: 'authenticated' })])
    const result = await fn(tx)
    await tx.query('reset role')
    return result
  })
}
