import { createHash, randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import pg from 'pg'
import { createDatabase, type Database, type Queryable } from '../../server/utils/db/db-drivers'
import { runMigrations } from '../../server/utils/db/migrations'
import { loadMigrationFiles } from '../load-migrations'

// A new test database starts as a copy of one that the migrations were applied to once per set of
// migrations (a template), so that an app starting on it applies none: on the 2-core machine an
// app on a fresh embedded database took 32 s to start while CI's browser tests ran, against 10 s on
// a migrated copy. Tests about applying migrations make their databases empty (`{ empty: true }`)
// or apply them in-process (freshDatabase).

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

/**
 * What identifies the current migrations (their names and text) and the embedded database's
 * version (its folder's format): a template made from others is not used.
 */
function migrationsKey(): string {
  const hash = createHash('sha256')
  hash.update(JSON.parse(readFileSync('node_modules/@electric-sql/pglite/package.json', 'utf8')).version)
  for (const migration of loadMigrationFiles()) hash.update(`${migration.name}\0${migration.sql}\0`)
  return hash.digest('hex').slice(0, 16)
}

/** Each template once per process: the files do not change while the tests run. */
const templates: { server?: Promise<string>, pglite?: Promise<string> } = {}

/**
 * The Postgres template: a database on the server with the current migrations applied, made once
 * (under an advisory lock, so that concurrent test files make it once) and published by renaming
 * it when complete. Templates of earlier migrations are dropped.
 */
export function serverTemplate(): Promise<string> {
  templates.server ??= makeServerTemplate()
  return templates.server
}

async function makeServerTemplate(): Promise<string> {
  const name = `tws_template_${migrationsKey()}`
  const admin = new pg.Client({ connectionString: serverUrl() })
  await admin.connect()
  try {
    await admin.query(`select pg_advisory_lock(hashtext('tws_test_template'))`)
    const { rows } = await admin.query('select 1 from pg_database where datname = $1', [name])
    if (rows.length) return name
    const building = `${name}_building`
    await admin.query(`drop database if exists ${building} with (force)`)
    await admin.query(`create database ${building}`)
    const url = new URL(serverUrl())
    url.pathname = `/${building}`
    const db = createDatabase({ url: url.toString(), max: 1 })
    try {
      await runMigrations(db, loadMigrationFiles())
    }
    finally {
      await db.close()
    }
    await admin.query(`alter database ${building} rename to ${name}`)
    const { rows: old } = await admin.query<{ datname: string }>(`select datname from pg_database where datname like 'tws\\_template\\_%' and datname <> $1`, [name])
    for (const { datname } of old) await admin.query(`drop database if exists ${datname} with (force)`).catch(() => {})
    return name
  }
  finally {
    await admin.query(`select pg_advisory_unlock(hashtext('tws_test_template'))`).catch(() => {})
    await admin.end()
  }
}

/**
 * The embedded database's template: a PGlite folder with the current migrations applied, made
 * once per set of migrations in the system's temporary folder (one maker at a time, by a lock
 * folder) and published by renaming it when complete.
 */
export function pgliteTemplate(): Promise<string> {
  templates.pglite ??= makePgliteTemplate()
  return templates.pglite
}

async function makePgliteTemplate(): Promise<string> {
  const folder = join(tmpdir(), `tws-pglite-template-${migrationsKey()}`)
  if (existsSync(folder)) return folder
  const lock = `${folder}.lock`
  for (;;) {
    try {
      mkdirSync(lock)
      break
    }
    catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      // a maker that died leaves its lock: taken over after 5 minutes
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 5 * 60_000) rmSync(lock, { recursive: true, force: true })
      await new Promise(resolve => setTimeout(resolve, 200))
    }
  }
  try {
    if (existsSync(folder)) return folder
    const building = `${folder}.building`
    rmSync(building, { recursive: true, force: true })
    const db = createDatabase({ dataDir: building })
    try {
      await runMigrations(db, loadMigrationFiles())
    }
    finally {
      await db.close()
    }
    renameSync(building, folder)
    // templates of earlier migrations go
    for (const name of readdirSync(tmpdir())) {
      if (name.startsWith('tws-pglite-template-') && !name.startsWith(basename(folder))) rmSync(join(tmpdir(), name), { recursive: true, force: true })
    }
    return folder
  }
  finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

/** A copy of the embedded database's template in `folder` (a PGlite data folder, migrated). */
export async function copyPgliteTemplate(folder: string): Promise<void> {
  cpSync(await pgliteTemplate(), folder, { recursive: true })
}

/**
 * Creates a database on the Postgres server and returns its URL and a dropper: a copy of the
 * migrated template, or with `empty`, a database with nothing in it.
 */
export async function createServerDatabase(options: { empty?: boolean } = {}): Promise<{ url: string, drop: () => Promise<void> }> {
  const name = `tws_test_${randomBytes(6).toString('hex')}`
  const template = options.empty ? null : await serverTemplate()
  const admin = new pg.Client({ connectionString: serverUrl() })
  await admin.connect()
  await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`)
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

/**
 * A fresh, migrated database of the current kind, opened in this process (PGlite in a temporary
 * folder): a copy of the template, which is made for the current migrations (migrationsKey), so
 * nothing is left to apply.
 */
export async function freshDatabase(): Promise<{ db: Database, close: () => Promise<void> }> {
  if (databaseKind() === 'pglite') {
    // a copy of the template (0.5 s) rather than migrating a new in-memory database (3 to 5 s)
    const folder = mkdtempSync(join(tmpdir(), 'tws-fresh-'))
    await copyPgliteTemplate(join(folder, 'db'))
    const db = createDatabase({ dataDir: join(folder, 'db') })
    return {
      db,
      async close() {
        await db.close()
        rmSync(folder, { recursive: true, force: true })
      },
    }
  }
  const server = await createServerDatabase()
  const db = createDatabase({ url: server.url, max: 4 })
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
