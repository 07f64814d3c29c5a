// What the handlers (server/api, routes, plugins, middleware) use from db/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { demoAccountHint, useDb } from './database'
export { isConnectionError } from './db-drivers'
export { listen, onReconnect, stopNotifications } from './notifications'
