import { existsSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseSequencer } from 'vitest/node'

/** Each file's duration in ms by `<project>:<path>`, from a run of the whole suite (`node scripts/test-durations.mjs`). */
const durationsFile = 'tests/durations.json'

/**
 * Runs the longest files first, over all projects at once. Vitest's own order queues the projects
 * one after the other and, without a cache of earlier runs (a fresh clone, as CI is), each
 * project's largest files first: a slow file of the last project can then start late and run on
 * alone at the end while the other workers have nothing left. Longest first leaves the short files
 * for the end, where they fill the gaps. A file's duration is this machine's cache when it has one,
 * else the recorded one (or the same file's in the other project); a file with none (a new one)
 * runs first, as vitest runs unknown files first.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  /** @param {import('vitest/node').TestSpecification[]} files */
  async sort(files) {
    const recorded = existsSync(durationsFile) ? JSON.parse(readFileSync(durationsFile, 'utf8')) : {}
    const base = await super.sort(files)
    // the same file on the other database takes about as long: its figure stands in for a missing one
    const byPath = new Map(Object.entries(recorded).map(([key, ms]) => [key.slice(key.indexOf(':') + 1), ms]))
    const duration = (/** @type {import('vitest/node').TestSpecification} */ spec) => {
      const path = relative(this.ctx.config.root, spec.moduleId)
      const key = `${spec.project.name}:${path}`
      return this.ctx.cache.getFileTestResults(key)?.duration ?? recorded[key] ?? byPath.get(path)
    }
    const unknown = base.filter(spec => duration(spec) === undefined)
    const known = base.filter(spec => duration(spec) !== undefined).sort((a, b) => duration(b) - duration(a))
    return [...unknown, ...known]
  }
}
