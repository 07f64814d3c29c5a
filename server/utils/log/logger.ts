// The app's one logger (consola). In production (NODE_ENV=production, the built app) every line is
// one JSON object: time (ISO), level, tag (the area: db, api, webhooks, ...), message, then the
// line's fields; elsewhere consola's readable lines. LOG_LEVEL (error, warn, info, debug, trace or
// silent; default info) sets the least level printed. A line a request causes names that request's
// id (its Request-Id answer header) in the field `request_id`, which the caller passes: see
// requestLogFields. (An AsyncLocalStorage around every request would find it by itself, but on
// Node 20 it turns on promise hooks for the whole process: a public API write cost about a fifth
// more server CPU with it, in bench:api.)
import { format, inspect } from 'node:util'
import { createConsola, LogLevels, type ConsolaInstance, type ConsolaReporter, type LogObject, type LogType } from 'consola'

/** What a line says beside its message (values JSON can write; an Error becomes its name, message, code and stack). */
export type LogFields = Record<string, unknown>

export interface Logger {
  debug(message: string, fields?: LogFields): void
  info(message: string, fields?: LogFields): void
  warn(message: string, fields?: LogFields): void
  error(message: string, fields?: LogFields): void
}

const levelNames: Record<string, number> = {
  silent: LogLevels.silent, fatal: LogLevels.fatal, error: LogLevels.error, warn: LogLevels.warn,
  info: LogLevels.info, debug: LogLevels.debug, trace: LogLevels.trace,
}

/** consola's level for LOG_LEVEL (a name above, or a consola number); info when unset or unknown. */
export function logLevel(value = process.env.LOG_LEVEL): number {
  const name = value?.trim().toLowerCase()
  if (!name) return LogLevels.info
  if (name in levelNames) return levelNames[name]!
  const number = Number(name)
  return Number.isInteger(number) ? number : LogLevels.info
}

/** The level a JSON line names for a consola type (success, ready, start, box and log are info). */
function levelOf(type: LogType): string {
  if (type === 'fatal' || type === 'error' || type === 'warn' || type === 'debug' || type === 'trace') return type
  if (type === 'verbose') return 'trace'
  return 'info'
}

/** An Error as JSON can write it (its cause too, a few deep). */
function errorFields(error: Error, depth = 0): LogFields {
  const { code } = error as { code?: unknown }
  return {
    name: error.name,
    message: error.message,
    ...(code === undefined ? {} : { code }),
    ...(error.stack ? { stack: error.stack } : {}),
    ...(error.cause instanceof Error && depth < 3 ? { cause: errorFields(error.cause, depth + 1) } : {}),
  }
}

const isPlainObject = (value: unknown): value is LogFields =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype

/** The fields with every Error in them made writable. */
function writableFields(fields: LogFields): LogFields {
  const out: LogFields = {}
  for (const [key, value] of Object.entries(fields)) out[key] = value instanceof Error ? errorFields(value) : value
  return out
}

/** The line's JSON, its fields never able to stop it being written (a cycle, a BigInt). */
function jsonLine(line: LogFields): string {
  try {
    return JSON.stringify(line, (_, value) => typeof value === 'bigint' ? value.toString() : value)
  }
  catch {
    const { time, level, tag, message, request_id } = line
    return JSON.stringify({ time, level, tag, message, request_id, fields: inspect(line, { depth: 4 }) })
  }
}

/** Marks the fields of this logger's own calls, so that the JSON reporter tells them from a console call's object. */
const ownFields = Symbol('log fields')

/**
 * One JSON line per call. A call of this logger is `(message, fields)`; anything else (the console,
 * which production routes here) is formatted as the console would into the message, an Error
 * among its arguments also as `error`.
 */
const jsonReporter: ConsolaReporter = {
  log(logObj: LogObject) {
    const [first, second, ...rest] = logObj.args
    let message: string
    let fields: LogFields = {}
    if (typeof first === 'string' && isPlainObject(second) && !rest.length && (second as { [ownFields]?: true })[ownFields]) {
      message = first
      fields = writableFields(second)
    }
    else {
      message = format(...logObj.args)
      const error = logObj.args.find(arg => arg instanceof Error)
      if (error) fields.error = errorFields(error as Error)
    }
    const requestId = fields.request_id
    delete fields.request_id
    const line: LogFields = {
      time: logObj.date.toISOString(),
      level: levelOf(logObj.type),
      tag: logObj.tag || 'app',
      message,
      ...(requestId ? { request_id: requestId } : {}),
    }
    // a field never takes the place of the line's own keys
    for (const [key, value] of Object.entries(fields)) if (!(key in line)) line[key] = value
    // every level on stdout: one stream keeps the lines in order, each whole
    process.stdout.write(`${jsonLine(line)}\n`)
  },
}

const isProduction = process.env.NODE_ENV === 'production'

/**
 * The root instance. Repeated lines are not folded (consola's throttle would hold a line back and
 * print it later, away from its request).
 */
export const rootLogger: ConsolaInstance = createConsola({
  level: logLevel(),
  throttle: 0,
  ...(isProduction ? { reporters: [jsonReporter] } : {}),
})

/** Whether lines are JSON (production). */
export const isJsonLog = isProduction

/** The logger of one area: its lines are tagged `tag`. */
export function logger(tag: string): Logger {
  const tagged = rootLogger.withTag(tag)
  const write = (type: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: LogFields) => {
    const all = { ...fields }
    if (all.request_id == null) delete all.request_id
    if (isProduction) {
      tagged[type](message, { ...all, [ownFields]: true })
      return
    }
    if (Object.keys(all).length) tagged[type](message, all)
    else tagged[type](message)
  }
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') }
}

/**
 * Production: the console's calls (the server's own "Listening on", a library's warning) become
 * JSON lines of the tag `console`, so that every line the app prints is JSON.
 */
export function routeConsoleToLog(): void {
  if (isProduction) rootLogger.withTag('console').wrapConsole()
}

/** The fields that tie a line to the request it was written for: its id (the Request-Id it answers), where it has one. */
export function requestLogFields(event: { context: { apiRequest?: { id?: string } } }): LogFields {
  const id = event.context.apiRequest?.id
  return id ? { request_id: id } : {}
}
