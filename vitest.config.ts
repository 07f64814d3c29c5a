import { configDefaults, defineConfig } from 'vitest/config'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import { fileURLToPath } from 'node:url'
import LongestFirstSequencer from './tests/support/sequencer.mjs'

const alias = {
  '#shared': fileURLToPath(new URL('./shared', import.meta.url)),
}

// Route and database tests run once per database: always on the embedded PGlite, and on a
// Postgres server too when TEST_DATABASE_URL is set (each test file gets its own database).
// A `*.postgres.test.ts` file is about a Postgres server itself (restarting one, several app
// processes on one) and runs in the postgres project only; a `*.pglite.test.ts` file is about the
// embedded database alone (`npm run dev` as it starts) and runs in the pglite project only.
const databaseProject = (kind: 'pglite' | 'postgres'): TestProjectInlineConfiguration => ({
  resolve: { alias },
  test: {
    name: kind,
    include: ['tests/integration/**/*.test.ts'],
    exclude: [...configDefaults.exclude, `tests/integration/**/*.${kind === 'pglite' ? 'postgres' : 'pglite'}.test.ts`],
    env: { TEST_DB_KIND: kind },
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})

export default defineConfig({
  test: {
    // Vitest's default is one file at a time on a 2-core machine (cores - 1); the route and database
    // files spend most of their time waiting on their app process and the database, so three at a
    // time take about two thirds of the time (5 min 53 s against 8 min 47 s for both databases).
    maxWorkers: 3,
    // the longest files first, over all projects (tests/support/sequencer.mjs, tests/durations.json)
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      { resolve: { alias }, test: { name: 'unit', include: ['tests/unit/**/*.test.ts'] } },
      databaseProject('pglite'),
      ...(process.env.TEST_DATABASE_URL ? [databaseProject('postgres')] : []),
    ],
  },
})
