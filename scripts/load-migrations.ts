import { join } from 'node:path'
import { readMigrationFolder, type Migration } from '../server/utils/db/migrations'

/** Reads supabase/migrations/*.sql from the project folder (scripts and tests). */
export function loadMigrationFiles(root = process.cwd()): Migration[] {
  return readMigrationFolder(join(root, 'supabase/migrations'))
}
