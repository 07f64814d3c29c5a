// npm run db:migrate: applies supabase/migrations to DATABASE_DIRECT_URL or else DATABASE_URL (a
// pooler's direct connection when there is one), or to the embedded
// database in PGLITE_DATA_DIR (default .data/db) when DATABASE_URL is unset.
// Stop the app first when it runs on the embedded database (one process per PGlite folder).
import { createDatabase } from '../server/utils/db/db-drivers'
import { runMigrations } from '../server/utils/db/migrations'
import { loadMigrationFiles } from './load-migrations'

async function main() {
  const url = process.env.DATABASE_DIRECT_URL || process.env.NUXT_DATABASE_DIRECT_URL || process.env.DATABASE_URL || process.env.NUXT_DATABASE_URL
  const dataDir = process.env.PGLITE_DATA_DIR || process.env.NUXT_PGLITE_DATA_DIR || '.data/db'
  const db = createDatabase({ url, dataDir, max: 1 })
  try {
    const applied = await runMigrations(db, loadMigrationFiles())
    console.info(applied.length ? `Applied: ${applied.join(', ')}` : 'The database is up to date.')
  }
  finally {
    await db.close()
  }
}

main().catch((error: Error) => {
  console.error(error.message)
  process.exit(1)
})
