// What the handlers (server/api, routes, plugins, middleware) use from mcp/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { grantCaller, handleMcpRequest, keyCaller, readMcpMessage } from './mcp'
export type { McpCaller } from './mcp'
