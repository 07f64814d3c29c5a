import { existsSync, readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** Each file's duration in ms by `<project>:<path>`, from a run of the whole suite (`node scripts/test-durations.mjs`). */
export const durationsFile = 'tests/durations.json'

/**
 * Runs the longest files first, over all projects at once. Vitest's own order runs the projects one
 * after the other and, without a cache of earlier runs (a fresh clone, as CI is), the largest files
 * of each first: the slow Postgres-only files then started last, while the other workers had run
 * out of files. Longest first leaves the short files for the end, where they fill the gaps. A file's
 * duration is this machine's cache when it has one, else the recorded one; a file with neither (a
 * new one) runs first, as vitest runs unknown files first.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = existsSync(durationsFile) ? JSON.parse(readFileSync(durationsFile, 'utf8')) as Record<string, number> : {}
    const base = await super.sort(files)
    const duration = (spec: TestSpecification) => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`
      return this.ctx.cache.getFileTestResults(key)?.duration ?? recorded[key]
    }
    const unknown = base.filter(spec => duration(spec) === undefined)
    const known = base.filter(spec => duration(spec) !== undefined).sort((a, b) => duration(b)! - duration(a)!)
    return [...unknown, ...known]
  }
}
