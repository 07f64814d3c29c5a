// What the handlers (server/api, routes, plugins, middleware) use from activity/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { exportActivity, listActivity, purgeExpiredActivity } from './activity-log'
export { teamOverview } from './overview'
