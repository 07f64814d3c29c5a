// What the handlers (server/api, routes, plugins, middleware) use from jobs/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { schedule } from './scheduler'
export type { Job, JobOptions } from './scheduler'
export { purgeInBatches } from './purge'
