import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Migration } from '../server/utils/migrations'

/** Reads supabase/migrations/*.sql from the project folder (scripts and tests). */
export function loadMigrationFiles(root = process.cwd()): Migration[] {
  const folder = join(root, 'supabase/migrations')
  return readdirSync(folder)
    .filter(name => name.endsWith('.sql'))
    .sort()
    .map(name => ({ name, sql: readFileSync(join(folder, name), 'utf8') }))
}
