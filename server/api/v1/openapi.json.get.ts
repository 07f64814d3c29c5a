export default definePublicApiHandler(async (event) => {
  // with a key, only the operations that key may call
  const hasKey = requestHeader(event, 'authorization') || requestHeader(event, 'apikey')
  const scopes = hasKey ? (await authApiKey(event)).apiKey.scopes : undefined
  return openApiDocument(await useTableRegistry(), publicOrigin(event), scopes)
})
