import { readdirSync, readFileSync } from 'node:fs'

/**
 * CPU time for the benches, from /proc (Linux; undefined elsewhere). Unlike requests per second
 * on a shared machine, a process's CPU time per request hardly changes with what else the machine
 * runs: it is the figure to compare one design's work with another's.
 */

// USER_HZ: 100 on every Linux that matters here (getconf CLK_TCK)
const clockTicks = 100

function statOf(pid: number | string): { name: string, ms: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the fields after the command name (which is in brackets and may hold spaces); utime and stime are the 14th and 15th fields
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks }
  }
  catch {
    return undefined
  }
}

/** The CPU time (user + system, in ms) a process has used so far. */
export function processCpuMs(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : statOf(pid)?.ms
}

/**
 * The CPU time (ms) the Postgres server's processes have used so far, those running now (a
 * backend that exits between two readings takes its time with it: the benches keep their
 * connections open).
 */
export function postgresCpuMs(): number | undefined {
  let names: string[]
  try {
    names = readdirSync('/proc').filter(name => /^\d+$/.test(name))
  }
  catch {
    return undefined
  }
  let total = 0
  for (const pid of names) {
    const stat = statOf(pid)
    if (stat?.name === 'postgres') total += stat.ms
  }
  return total
}
