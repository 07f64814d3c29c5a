import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { userMessage } from '../support/chat'
import { appWithModelForFile } from '../support/file-hooks'
import { teamWithRoles, type Client, type TeamFixture } from '../support/http'
import type { ScriptedModelServer } from '../support/openai-server'

// Each scripted answer reports 100 input and 10 output tokens: a cap of 250 allows three answers.
let app: TestApp
let model: ScriptedModelServer
let team: TeamFixture
appWithModelForFile(() => ({ CHAT_TEAM_MONTHLY_TOKENS: '250' }), (started) => {
  ({ app, model, team } = started)
})

async function newChat(client: Client): Promise<string> {
  return (await client.post('/api/chats', {})).body.id
}

const ask = (client: Client, chatId: string, text: string) => client.post(`/api/chats/${chatId}`, userMessage(text))

describe('the monthly team token cap (CHAT_TEAM_MONTHLY_TOKENS)', () => {
  it('answers 429 without calling the model once the team used its tokens, also in a new chat, and leaves other teams alone', async () => {
    const chatId = await newChat(team.member)
    for (const question of ['one', 'two', 'three']) expect((await ask(team.member, chatId, question)).status).toBe(200)
    const { rows } = await app.db.query('select coalesce(sum(input_tokens + output_tokens), 0)::int as used from public.chat_token_usage where team_id = $1', [team.teamId])
    expect(rows[0].used).toBe(330)

    const calls = model.requests.length
    const refused = await ask(team.member, chatId, 'four')
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatch(/used its chat allowance for this month \(330 of 250 tokens\)/)
    expect(model.requests.length).toBe(calls)
    // the refused question is not stored
    const stored = await team.member.get(`/api/chats/${chatId}`)
    expect(stored.body.messages.filter((m: { role: string }) => m.role === 'user')).toHaveLength(3)

    // deleting the chat gives nothing back; another member of the team is capped too
    expect((await team.member.delete(`/api/chats/${chatId}`)).status).toBe(204)
    expect((await ask(team.owner, await newChat(team.owner), 'five')).status).toBe(429)
    expect((await team.member.post(`/api/chats/${await newChat(team.member)}`, { regenerate: true })).status).toBe(429)
    expect(model.requests.length).toBe(calls)

    // the outsider's team has its own allowance
    expect((await ask(team.outsider, await newChat(team.outsider), 'hello')).status).toBe(200)
    expect(model.requests.length).toBe(calls + 1)
  })

  it('counts only the current calendar month', async () => {
    const other = await teamWithRoles(app)
    await app.db.query(
      `insert into public.chat_token_usage (team_id, input_tokens, output_tokens, created_at) values ($1, 1000, 1000, date_trunc('month', now()) - interval '1 day')`,
      [other.teamId])
    expect((await ask(other.member, await newChat(other.member), 'still allowed')).status).toBe(200)
  })
})
