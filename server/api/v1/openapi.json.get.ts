export default definePublicApiHandler(async (event) => {
  // with a key, only the operations that key may call
  const hasKey = getRequestHeader(event, 'authorization') || getRequestHeader(event, 'apikey')
  const scopes = hasKey ? (await authApiKey(event)).apiKey.scopes : undefined
  return openApiDocument(await useTableRegistry(), publicOrigin(event), scopes)
})
