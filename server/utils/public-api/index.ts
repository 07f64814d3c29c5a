// What the handlers (server/api, routes, plugins, middleware) use from public-api/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { recordEtag } from './answer'
export { apiError, apiErrorBody, definePublicApiHandler } from './errors'
export { openApiDocument } from './openapi'
export { RecordBody, isPublicApiPath, publicOrigin, requireRecordId } from './routes'
export { answerApiRequest, answerTableRequest } from './serve'
