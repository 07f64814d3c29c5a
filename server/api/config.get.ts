// Public flags the browser needs before sign-in.
export default defineEventHandler(() => {
  const config = useRuntimeConfig()
  return { chat_enabled: Boolean(config.llmProviderApiKey) }
})
