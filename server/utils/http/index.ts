// What the handlers (server/api, routes, plugins, middleware) use from http/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { limitRequestBody } from './body-limit'
export { compressJsonAnswer, compressPageAnswer } from './compression'
export { requestHeader } from './request'
