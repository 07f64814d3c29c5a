import { randomBytes } from 'node:crypto'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { createDatabase, type Database } from './db-drivers'
import { readMigrationFolder, runMigrations, type Migration } from './migrations'
import { setting } from '../settings'
import { logger } from '../log/logger'

const log = logger('db')

let ready: Promise<Database> | undefined

async function readSupabaseAsset(key: string): Promise<string> {
  const value = await useStorage('assets:supabase').getItemRaw(key)
  return typeof value === 'string' ? value : Buffer.from(value as Uint8Array).toString('utf8')
}

async function bundledMigrations(): Promise<Migration[]> {
  const keys = await useStorage('assets:supabase').getKeys('migrations')
  return Promise.all(keys.filter(key => key.endsWith('.sql')).map(async key => ({
    name: key.split(':').pop()!,
    sql: await readSupabaseAsset(key),
  })))
}

// The demo accounts' password as published in the README and seed.sql: fine on a developer's
// machine, never on a production server, where an explicit NUXT_SEED_DEMO=true gets a fresh one.
const publishedDemoPassword = 'demo-password'
const demoEmail = 'demo@example.com'

/** The published demo sign-in while the demo account exists, in development (npm run dev) only; else null. */
export async function demoAccountHint(): Promise<{ email: string, password: string } | null> {
  if (!import.meta.dev) return null
  const db = await useDb()
  const { rows } = await db.query('select 1 from public.profiles where email = $1', [demoEmail])
  return rows.length ? { email: demoEmail, password: publishedDemoPassword } : null
}

async function seedDemo(db: Database, production: boolean) {
  const { rows } = await db.query<{ count: number }>('select count(*)::int as count from public.profiles')
  if (rows[0]!.count > 0) return
  const seed = await readSupabaseAsset('seed.sql')
  const password = production ? randomBytes(18).toString('base64url') : publishedDemoPassword
  const passwordHash = production ? await hashPassword(password) : undefined
  await db.transaction(async (tx) => {
    await tx.exec(seed)
    if (passwordHash) await tx.query('update auth.users set encrypted_password = $1', [passwordHash])
  })
  // printed this once only: the next start finds the users and seeds nothing
  log.info(`Seeded the demo team. Sign in as ${demoEmail} with the password ${password}`)
}

/**
 * Whether DATABASE_URL is a pooler: DATABASE_DIRECT_URL names another connection. Then the
 * request pool keeps nothing on a server connection between transactions (no named statements),
 * and migrations run on the direct connection.
 */
export function isBehindPooler(): boolean {
  const url = setting('databaseUrl')
  const directUrl = setting('databaseDirectUrl')
  return Boolean(url && directUrl && directUrl !== url)
}

/** Applies the migrations on the direct connection when there is a pooler (its own short-lived pool), else on `db`. */
async function migrate(db: Database, migrations: Migration[]): Promise<string[]> {
  if (!isBehindPooler()) return runMigrations(db, migrations)
  const direct = createDatabase({ url: setting('databaseDirectUrl'), max: 1, prepare: false })
  try {
    return await runMigrations(direct, migrations)
  }
  finally {
    await direct.close()
  }
}

async function openDatabase(): Promise<Database> {
  const config = useRuntimeConfig()
  const prepare = setting('databasePrepare') !== 'false' && !isBehindPooler()
  const db = createDatabase({ url: setting('databaseUrl') || undefined, dataDir: config.pgliteDataDir, prepare })
  // TEST_MIGRATIONS_DIR: a folder of extra migrations that tests add (e.g. a table, to show that the
  // registry picks it up); never set in a deployment
  const extra = process.env.TEST_MIGRATIONS_DIR ? readMigrationFolder(process.env.TEST_MIGRATIONS_DIR) : []
  const applied = await migrate(db, [...await bundledMigrations(), ...extra])
  if (applied.length) log.info(`Applied ${applied.length} migration(s): ${applied.join(', ')}`, { migrations: applied })
  // the demo seeds itself on the embedded database in development (npm run dev); elsewhere only
  // on request. (NUXT_SEED_DEMO=true arrives as a boolean: Nuxt parses environment values.)
  const requested = String(config.seedDemo)
  const shouldSeed = requested === 'true' || (requested !== 'false' && db.kind === 'pglite' && import.meta.dev)
  if (shouldSeed) await seedDemo(db, !import.meta.dev)
  if (db.pglite && config.pgliteSocketPort) {
    const server = new PGLiteSocketServer({
      db: db.pglite,
      port: Number(config.pgliteSocketPort),
      host: '127.0.0.1',
      maxConnections: 10,
    })
    await server.start()
    log.info(`The embedded database accepts connections on 127.0.0.1:${config.pgliteSocketPort}`)
  }
  return db
}

/** The app's database, opened, migrated and (on the embedded default) seeded on first use. */
export function useDb(): Promise<Database> {
  ready ??= openDatabase()
  return ready
}
