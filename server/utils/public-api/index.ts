// What the handlers (server/api, routes, plugins, middleware) use from public-api/ without an import line:
// Nitro auto-imports from this file only (nuxt.config.ts). Modules inside server/utils import from the files themselves.
export { answerRecord, recordEtag } from './answer'
export { apiError, apiErrorBody, definePublicApiHandler } from './errors'
export { openApiDocument } from './openapi'
export { answerRecordList } from './read'
export { RecordBody, authApiTable, isPublicApiPath, keyAccess, publicOrigin, requireRecordId } from './routes'
export { answerCreate, answerFilteredWrite, deleteRecordIfMatch, updateRecordIfMatch } from './write'
