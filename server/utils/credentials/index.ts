// What the handlers (server/api, routes, plugins, middleware) use from credentials/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { authApiKey, createApiKey, listApiKeys, revokeApiKey, rollApiKey, updateApiKey } from './api-keys'
export { countAddressRequest, enforceRateLimit, settleRateLimit } from './rate-limits'
