import { describe, expect, it } from 'vitest'
import { startApp } from '../support/app'

describe('settings', () => {
  it('refuses to start in production without a session password', async () => {
    await expect(startApp({ NUXT_SESSION_PASSWORD: '' })).rejects.toThrow(/exited \(1\)[\s\S]*NUXT_SESSION_PASSWORD/)
  })

  it('reads the documented plain names: LLM_PROVIDER_API_KEY enables the chat', async () => {
    const off = await startApp()
    try {
      expect(await (await fetch(`${off.url}/api/config`)).json()).toMatchObject({ chat_enabled: false })
    }
    finally {
      await off.stop()
    }
    const on = await startApp({ LLM_PROVIDER_API_KEY: 'test-key' })
    try {
      expect(await (await fetch(`${on.url}/api/config`)).json()).toMatchObject({ chat_enabled: true })
    }
    finally {
      await on.stop()
    }
  })
})
