// Records each test file's duration for tests/support/sequencer.mjs from vitest's own cache of the
// last runs (node_modules/.vite/vitest/*/results.json, keyed `<project>:<path>` as the sequencer
// reads them). Run the whole suite first (TEST_DATABASE_URL=... npm test), then:
//   node scripts/test-durations.mjs
// Files the cache has replace their recorded figures; the others keep theirs. Record one whole
// run, so that every figure is from the same conditions (a file run alone is far quicker than
// the same file among three workers). The sequencer takes a file's figure from the other project
// when its own is missing, so a run on one database is enough.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const cacheDir = 'node_modules/.vite/vitest'
const file = 'tests/durations.json'
const durations = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}
for (const dir of existsSync(cacheDir) ? readdirSync(cacheDir) : []) {
  const results = join(cacheDir, dir, 'results.json')
  if (!existsSync(results)) continue
  for (const [key, { duration }] of JSON.parse(readFileSync(results, 'utf8')).results) {
    if (Number.isFinite(duration) && duration > 0) durations[key] = Math.round(duration)
  }
}
writeFileSync(file, `${JSON.stringify(Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b))), null, 2)}\n`)
console.info(`${Object.keys(durations).length} files in ${file}`)
