// Request bodies above 1 MiB are refused (server/utils/request-body.ts).
export default defineEventHandler(limitRequestBody)
