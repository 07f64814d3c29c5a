// What the handlers (server/api, routes, plugins, middleware) use from records/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { authTableAction, listDataTables } from './data-tables'
export { idempotent } from './idempotency'
export { createRecord, getRecord } from './records'
export { useTableRegistry } from './table-registry'
