// What the handlers (server/api, routes, plugins, middleware) use from log/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { logger, requestLogFields, routeConsoleToLog } from './logger'
export type { Logger, LogFields } from './logger'
