export default defineEventHandler(async () => {
  return openApiDocument(await useTableRegistry(), useRuntimeConfig().baseUrl || undefined)
})
