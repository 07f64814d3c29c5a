import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { signUp, createTeam, type Client } from '../support/http'

// The chat list is a page, not every chat a user ever started: the chat page renders each chat
// listed, so an unbounded list made every render (and the server's memory) grow with use.
let app: TestApp
let user: Client
beforeAll(async () => {
  app = await startApp({ LLM_PROVIDER_API_KEY: 'test-key', LLM_PROVIDER_BASE_URL: 'http://127.0.0.1:9/v1', LLM_MODEL: 'scripted-model' })
  user = await signUp(app, { name: 'Chatty' })
  await createTeam(user, 'Chat Team')
})
afterAll(() => app?.stop())

describe('GET /api/chats', () => {
  it('answers the 50 most recent chats unless asked for a page', async () => {
    const ids: string[] = []
    for (let i = 0; i < 55; i++) {
      const created = await user.post('/api/chats', { title: `Chat ${i}` })
      expect(created.status).toBe(201)
      ids.push(created.body.id)
    }
    const first = await user.get('/api/chats')
    expect(first.status).toBe(200)
    expect(first.body).toHaveLength(50)
    expect(first.body[0].title).toBe('Chat 54')
    const rest = await user.get('/api/chats?limit=50&offset=50')
    expect(rest.body.map((c: { title: string }) => c.title)).toEqual(['Chat 4', 'Chat 3', 'Chat 2', 'Chat 1', 'Chat 0'])
    expect(new Set([...first.body, ...rest.body].map((c: { id: string }) => c.id))).toEqual(new Set(ids))
    for (const query of ['limit=0', 'limit=101', 'offset=-1', 'limit=x']) {
      const answer = await user.get(`/api/chats?${query}`)
      expect(answer.status, query).toBe(400)
    }
  })
})
