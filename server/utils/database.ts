import { PGLiteSocketServer } from '@electric-sql/pglite-socket'
import { createDatabase, type Database } from './db'
import { runMigrations, type Migration } from './migrations'

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

async function seedDemo(db: Database) {
  const { rows } = await db.query<{ count: number }>('select count(*)::int as count from public.profiles')
  if (rows[0]!.count > 0) return
  const seed = await readSupabaseAsset('seed.sql')
  await db.transaction(tx => tx.exec(seed))
  console.info('[db] Seeded the demo team. Sign in as demo@example.com with the password demo-password')
}

async function openDatabase(): Promise<Database> {
  const config = useRuntimeConfig()
  const db = createDatabase({ url: setting('databaseUrl') || undefined, dataDir: config.pgliteDataDir })
  const applied = await runMigrations(db, await bundledMigrations())
  if (applied.length) console.info(`[db] Applied ${applied.length} migration(s): ${applied.join(', ')}`)
  const shouldSeed = config.seedDemo ? config.seedDemo === 'true' : db.kind === 'pglite'
  if (shouldSeed) await seedDemo(db)
  if (db.pglite && config.pgliteSocketPort) {
    const server = new PGLiteSocketServer({
      db: db.pglite,
      port: Number(config.pgliteSocketPort),
      host: '127.0.0.1',
      maxConnections: 10,
    })
    await server.start()
    console.info(`[db] The embedded database accepts connections on 127.0.0.1:${config.pgliteSocketPort}`)
  }
  return db
}

/** The app's database, opened, migrated and (on the embedded default) seeded on first use. */
export function useDb(): Promise<Database> {
  ready ??= openDatabase()
  return ready
}
