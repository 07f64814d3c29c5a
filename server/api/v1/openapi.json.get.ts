export default definePublicApiHandler(async (event) => {
  // with a bearer key, only the operations that key may call
  const scopes = getRequestHeader(event, 'authorization') ? (await authApiKey(event)).apiKey.scopes : undefined
  return openApiDocument(await useTableRegistry(), useRuntimeConfig().baseUrl || undefined, scopes)
})
