// Request bodies above 1 MiB are refused (server/utils/request.ts).
export default defineEventHandler(limitRequestBody)
