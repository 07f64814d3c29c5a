import type { LanguageModel } from 'ai'
import { setting } from '../settings'

const defaultModel = 'gpt-4o-mini'

/**
 * The chat model: any OpenAI-compatible server through the Chat Completions API
 * (LLM_PROVIDER_BASE_URL, default OpenAI), model LLM_MODEL. Tests point the base URL at a
 * scripted server, so this one function is the only way to a model. The provider's package is
 * imported with the first turn, not at start-up.
 */
export async function chatModel(): Promise<LanguageModel> {
  const { createOpenAI } = await import('@ai-sdk/openai')
  const provider = createOpenAI({ apiKey: setting('llmProviderApiKey'), baseURL: setting('llmProviderBaseUrl') || undefined })
  return provider.chat(setting('llmModel') || defaultModel)
}
