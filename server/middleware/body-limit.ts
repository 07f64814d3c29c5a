// Request bodies above 1 MiB are refused (server/utils/http/body-limit.ts).
export default defineEventHandler(limitRequestBody)
