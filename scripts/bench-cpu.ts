import { readdirSync, readFileSync } from 'node:fs'

/**
 * CPU time for the benches, from /proc (Linux; undefined elsewhere). Unlike requests per second
 * on a shared machine, a process's CPU time per request hardly changes with what else the machine
 * runs: it is the figure to compare one design's work with another's.
 */

// USER_HZ: 100 on every Linux that matters here (getconf CLK_TCK)
const clockTicks = 100

/** A process's name, its CPU time and that of its exited children it has waited for (ms). */
function statOf(pid: number | string): { name: string, ms: number, childrenMs: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the fields after the command name (which is in brackets and may hold spaces): utime, stime,
    // cutime and cstime are the 14th to 17th fields
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
    return {
      name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      ms: ((fields[11]! + fields[12]!) * 1000) / clockTicks,
      childrenMs: ((fields[13]! + fields[14]!) * 1000) / clockTicks,
    }
  }
  catch {
    return undefined
  }
}

/** The CPU time (user + system, in ms) a process has used so far. */
export function processCpuMs(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : statOf(pid)?.ms
}

/** The running Postgres processes (the server's main process, backends, background processes) with their /proc/<pid>/stat; undefined without /proc. */
function postgresProcesses(): { pid: string, stat: NonNullable<ReturnType<typeof statOf>> }[] | undefined {
  let names: string[]
  try {
    names = readdirSync('/proc').filter(name => /^\d+$/.test(name))
  }
  catch {
    return undefined
  }
  return names.map(pid => ({ pid, stat: statOf(pid) })).filter((p): p is { pid: string, stat: NonNullable<ReturnType<typeof statOf>> } => p.stat?.name === 'postgres')
}

/**
 * The CPU time (ms) the Postgres server's processes have used so far: those running now, and those
 * that have exited (the server's main process waits for each of its backends, which adds their
 * time to its children's).
 */
export function postgresCpuMs(): number | undefined {
  return postgresProcesses()?.reduce((total, { stat }) => total + stat.ms + stat.childrenMs, 0)
}

/** Time on a CPU, and time runnable but waiting for one (the run queue), in ms. */
export interface Schedule { cpuMs: number, waitMs: number }

/** One task's schedule, from /proc/<path>/schedstat (nanoseconds on a CPU, waiting, timeslices). */
function scheduleOf(path: string): Schedule | undefined {
  try {
    const [cpu, wait] = readFileSync(`/proc/${path}/schedstat`, 'utf8').split(' ').map(Number)
    return { cpuMs: cpu! / 1e6, waitMs: wait! / 1e6 }
  }
  catch {
    return undefined
  }
}

/** A process's schedule, summed over its threads (Node's own, the garbage collector's, libuv's). */
export function processSchedule(pid: number | undefined): Schedule | undefined {
  if (pid === undefined) return undefined
  let threads: string[]
  try {
    threads = readdirSync(`/proc/${pid}/task`)
  }
  catch {
    return undefined
  }
  const total = { cpuMs: 0, waitMs: 0 }
  for (const thread of threads) {
    const schedule = scheduleOf(`${pid}/task/${thread}`)
    total.cpuMs += schedule?.cpuMs ?? 0
    total.waitMs += schedule?.waitMs ?? 0
  }
  return total
}

/**
 * The schedule of each Postgres process running now (backends and background processes), by pid,
 * to nanoseconds (the ticks of /proc/<pid>/stat are 10 ms).
 */
export function postgresSchedules(): Map<number, Schedule> {
  const schedules = new Map<number, Schedule>()
  for (const { pid } of postgresProcesses() ?? []) {
    const schedule = scheduleOf(pid)
    if (schedule) schedules.set(Number(pid), schedule)
  }
  return schedules
}
