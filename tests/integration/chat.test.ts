import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { postTurn, userMessage, type ChatTurn } from '../support/chat'
import { appWithModelForFile } from '../support/file-hooks'
import { Client, signUp, type TeamFixture } from '../support/http'
import { waitFor } from '../support/wait'
import { contentText, lastToolResult, type ScriptedModelServer } from '../support/openai-server'

let app: TestApp
let model: ScriptedModelServer
let team: TeamFixture
appWithModelForFile(scripted => ({ CHAT_WEB_SEARCH_URL: scripted.searchUrl }), (started) => {
  ({ app, model, team } = started)
})

const ask = (client: Client, chatId: string, text: string) => postTurn(client, chatId, userMessage(text))

async function newChat(client: Client): Promise<string> {
  const answer = await client.post('/api/chats', {})
  expect(answer.status).toBe(201)
  return answer.body.id
}

const approvalRequests = (t: ChatTurn) => t.chunks.filter(c => c.type === 'tool-approval-request')

async function taskTitles(): Promise<string[]> {
  const { rows } = await app.db.query('select title from public.tasks where team_id = $1 order by title', [team.teamId])
  return rows.map(r => r.title)
}

describe('chat routes', () => {
  it('creates, lists, renames and deletes the caller\'s chats', async () => {
    const created = await team.member.post('/api/chats', { title: 'Planning' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ id: expect.any(String), title: 'Planning', created_at: expect.any(String) })
    const list = await team.member.get('/api/chats')
    expect(list.status).toBe(200)
    expect(list.body.map((c: any) => c.id)).toContain(created.body.id)
    expect((await team.owner.get('/api/chats')).body.map((c: any) => c.id)).not.toContain(created.body.id)
    const renamed = await team.member.patch(`/api/chats/${created.body.id}`, { title: 'Q3 planning' })
    expect(renamed.status).toBe(200)
    expect(renamed.body.title).toBe('Q3 planning')
    expect((await team.member.patch(`/api/chats/${created.body.id}`, { title: '  ' })).status).toBe(400)
    expect((await team.member.delete(`/api/chats/${created.body.id}`)).status).toBe(204)
    expect((await team.member.get(`/api/chats/${created.body.id}`)).status).toBe(404)
    expect((await team.anonymous.get('/api/chats')).status).toBe(401)
  })

  it('answers a question by querying the database, streams the answer and stores the history', async () => {
    await app.db.query(`insert into public.tasks (team_id, created_by, title, status, completed_at) values ($1, $2, 'Draft the budget', 'todo', null), ($1, $2, 'Book the venue', 'done', now())`, [team.teamId, team.owner.user!.id])
    const chatId = await newChat(team.member)
    model.enqueue(
      { toolCalls: [{ name: 'query_database', input: { sql: 'select title, status from tasks order by title' } }] },
      (request) => {
        const result = lastToolResult(request)
        return { text: `There are ${result.row_count} tasks: ${result.rows.map((r: string[]) => r[0]).join(' and ')}.` }
      },
    )
    const answer = await ask(team.member, chatId, 'Which tasks do we have?')
    expect(answer.status).toBe(200)
    expect(answer.text).toBe('There are 2 tasks: Book the venue and Draft the budget.')
    expect(answer.chunks).toContainEqual(expect.objectContaining({ type: 'tool-input-available', toolName: 'query_database', input: { sql: 'select title, status from tasks order by title' } }))
    expect(answer.chunks).toContainEqual(expect.objectContaining({ type: 'tool-output-available', output: expect.objectContaining({ columns: ['title', 'status'], row_count: 2 }) }))

    // the model was told the schema, with the allowed values
    const system = contentText(model.requests.at(-2)!.messages[0])
    expect(system).toContain('one of: (\'todo\', \'in_progress\', \'done\')')
    expect(system).toContain('fk: projects.id')

    const stored = await team.member.get(`/api/chats/${chatId}`)
    expect(stored.status).toBe(200)
    expect(stored.body.title).toBe('Which tasks do we have?')
    expect(stored.body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant'])
    const parts = stored.body.messages[1].parts
    expect(parts).toContainEqual(expect.objectContaining({ type: 'tool-query_database', state: 'output-available', input: { sql: 'select title, status from tasks order by title' } }))
    expect(parts).toContainEqual(expect.objectContaining({ type: 'text', text: 'There are 2 tasks: Book the venue and Draft the budget.' }))
  })

  it('returns a refused statement to the model instead of running it', async () => {
    const chatId = await newChat(team.member)
    model.enqueue(
      { toolCalls: [{ name: 'query_database', input: { sql: 'select * from tasks; delete from tasks' } }] },
      request => ({ text: `Tool said: ${lastToolResult(request).error}` }),
    )
    const answer = await ask(team.member, chatId, 'Delete everything')
    expect(answer.text).toBe('Tool said: Refused: send exactly one statement')
    expect((await taskTitles()).length).toBeGreaterThan(0)
  })

  it('asks for approval before a write, and writes it with source chat once approved', async () => {
    const chatId = await newChat(team.member)
    model.enqueue({ toolCalls: [{ name: 'create_tasks', input: { title: 'Order the catering', priority: 2 } }] })
    const proposal = await ask(team.member, chatId, 'Add a task to order the catering')
    const [request] = approvalRequests(proposal)
    expect(request).toMatchObject({ approvalId: expect.any(String) })
    expect(await taskTitles()).not.toContain('Order the catering')

    model.enqueue({ text: 'Done: the task is created.' })
    const approved = await postTurn(team.member, chatId, { approvals: [{ id: request.approvalId, approved: true }] })
    expect(approved.status).toBe(200)
    expect(approved.chunks).toContainEqual(expect.objectContaining({ type: 'tool-output-available', output: { record: expect.objectContaining({ title: 'Order the catering', priority: 2 }) } }))
    expect(approved.text).toBe('Done: the task is created.')
    expect(await taskTitles()).toContain('Order the catering')
    const { rows } = await app.db.query(
      `select actor_id, source, source_ref, action from public.activity_log where table_name = 'tasks' and new_data ->> 'title' = 'Order the catering'`)
    expect(rows).toEqual([{ actor_id: team.member.user!.id, source: 'chat', source_ref: chatId, action: 'insert' }])

    // the same approval cannot be answered twice
    const again = await postTurn(team.member, chatId, { approvals: [{ id: request.approvalId, approved: true }] })
    expect(again.status).toBe(409)
  })

  it('writes nothing when the user denies the write', async () => {
    const chatId = await newChat(team.member)
    model.enqueue({ toolCalls: [{ name: 'create_tasks', input: { title: 'Never created' } }] })
    const proposal = await ask(team.member, chatId, 'Add a task')
    const [request] = approvalRequests(proposal)
    model.enqueue(r => ({ text: r.messages.some(m => m.role === 'tool') ? 'Understood, nothing was created.' : 'no tool result' }))
    const denied = await postTurn(team.member, chatId, { approvals: [{ id: request.approvalId, approved: false, reason: 'not now' }] })
    expect(denied.chunks).toContainEqual(expect.objectContaining({ type: 'tool-output-denied' }))
    expect(denied.text).toBe('Understood, nothing was created.')
    expect(await taskTitles()).not.toContain('Never created')
    const { rows } = await app.db.query(`select count(*)::int as n from public.activity_log where source_ref = $1`, [chatId])
    expect(rows[0].n).toBe(0)
  })

  it('returns constraint violations with the allowed values, and the corrected retry succeeds', async () => {
    const chatId = await newChat(team.member)
    const results: any[] = []
    model.enqueue(
      { toolCalls: [{ name: 'create_tasks', input: { title: 'Ship it', status: 'finished' } }] },
      (request) => {
        results.push(lastToolResult(request))
        return { toolCalls: [{ name: 'create_tasks', input: { title: 'Ship it', status: 'done' } }] }
      },
    )
    const first = await ask(team.member, chatId, 'Add a done task "Ship it"')
    // invalid input needs no approval: it fails at once, naming the allowed values
    expect(results[0]).toEqual({ error: expect.stringContaining('status'), field: 'status', allowed_values: ['todo', 'in_progress', 'done'], constraints: expect.arrayContaining([expect.objectContaining({ name: 'tasks_status_check' }), expect.objectContaining({ name: 'tasks_done_has_completed_at' })]) })
    const [request] = approvalRequests(first)
    expect(request).toBeDefined()

    model.enqueue(
      (r) => {
        results.push(lastToolResult(r))
        return { toolCalls: [{ name: 'create_tasks', input: { title: 'Ship it', status: 'done', completed_at: '2026-01-05T10:00:00Z' } }] }
      },
    )
    const second = await postTurn(team.member, chatId, { approvals: [{ id: request.approvalId, approved: true }] })
    expect(results[1]).toMatchObject({ error: expect.stringContaining('tasks_done_has_completed_at'), constraints: [{ name: 'tasks_done_has_completed_at', definition: expect.stringContaining('completed_at IS NOT NULL') }] })
    expect(await taskTitles()).not.toContain('Ship it')
    const [retry] = approvalRequests(second)

    model.enqueue({ text: 'Created "Ship it" as done.' })
    const third = await postTurn(team.member, chatId, { approvals: [{ id: retry.approvalId, approved: true }] })
    expect(third.text).toBe('Created "Ship it" as done.')
    expect(await taskTitles()).toContain('Ship it')
  })

  it('gives a member no delete tool and only the tables their role may view', async () => {
    const chatId = await newChat(team.member)
    model.enqueue({ text: 'Hello.' })
    await ask(team.member, chatId, 'Hi')
    const tools = (model.requests.at(-1)!.tools ?? []).map(t => t.function.name).sort()
    expect(tools).toEqual(['create_notes', 'create_projects', 'create_tasks', 'query_database', 'update_notes', 'update_projects', 'update_tasks', 'web_search'])
    expect(contentText(model.requests.at(-1)!.messages[0])).not.toContain('Table activity_log')

    const ownerChat = await newChat(team.owner)
    model.enqueue({ text: 'Hello.' })
    await ask(team.owner, ownerChat, 'Hi')
    const ownerTools = (model.requests.at(-1)!.tools ?? []).map(t => t.function.name)
    expect(ownerTools).toContain('delete_tasks')
    expect(ownerTools).not.toContain('create_activity_log')
    expect(contentText(model.requests.at(-1)!.messages[0])).toContain('Table activity_log')
  })

  it('searches the web through the configured search endpoint', async () => {
    const chatId = await newChat(team.member)
    model.enqueue(
      { toolCalls: [{ name: 'web_search', input: { query: 'venue prices' } }] },
      request => ({ text: `Found: ${lastToolResult(request).results[0].title}` }),
    )
    const answer = await ask(team.member, chatId, 'What do venues cost?')
    expect(answer.text).toBe('Found: About venue prices')
  })

  it('regenerates the last answer in place of the old one', async () => {
    const chatId = await newChat(team.member)
    model.enqueue({ text: 'First answer.' })
    await ask(team.member, chatId, 'Say something')
    model.enqueue({ text: 'Second answer.' })
    const again = await postTurn(team.member, chatId, { regenerate: true })
    expect(again.text).toBe('Second answer.')
    const stored = await team.member.get(`/api/chats/${chatId}`)
    expect(stored.body.messages.map((m: any) => [m.role, m.parts.filter((p: any) => p.type === 'text').map((p: any) => p.text).join('')]))
      .toEqual([['user', 'Say something'], ['assistant', 'Second answer.']])
  })

  it('answers 404 for another user\'s chat, whatever the route', async () => {
    const chatId = await newChat(team.member)
    for (const other of [team.admin, team.outsider]) {
      expect((await other.get(`/api/chats/${chatId}`)).status).toBe(404)
      expect((await other.patch(`/api/chats/${chatId}`, { title: 'mine' })).status).toBe(404)
      expect((await other.delete(`/api/chats/${chatId}`)).status).toBe(404)
      expect((await ask(other, chatId, 'hello')).status).toBe(404)
    }
    expect((await team.member.get('/api/chats/not-a-uuid')).status).toBe(404)
    const { rows } = await app.db.query('select count(*)::int as n from public.chat_messages where chat_id = $1', [chatId])
    expect(rows[0].n).toBe(0)
  })

  it('refuses malformed turns with a 400 and unknown approvals with a 409', async () => {
    const chatId = await newChat(team.member)
    expect((await postTurn(team.member, chatId, { message: { id: 'x', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] } })).status).toBe(400)
    expect((await postTurn(team.member, chatId, { messages: [] })).status).toBe(400)
    expect((await postTurn(team.member, chatId, { approvals: [{ id: 'nope', approved: true }] })).status).toBe(409)
  })

  it('keeps the partial answer when the user stops it', async () => {
    const chatId = await newChat(team.member)
    model.enqueue({ text: 'one two three four five six seven eight nine ten eleven twelve', chunkDelayMs: 150 })
    const controller = new AbortController()
    const response = await fetch(`${app.url}/api/chats/${chatId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cookie': team.member.cookie },
      body: JSON.stringify({ message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: 'Count' }] } }),
      signal: controller.signal,
    })
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1')
    const reader = response.body!.getReader()
    let seen = ''
    while (!seen.includes('three')) seen += new TextDecoder().decode((await reader.read()).value)
    controller.abort()
    const text: string = await waitFor('the partial answer to be stored', async () => {
      const stored = await team.member.get(`/api/chats/${chatId}`)
      return stored.body.messages[1]?.parts.filter((p: any) => p.type === 'text').map((p: any) => p.text).join('')
    })
    expect(text).toMatch(/^one two three/)
    expect(text.length).toBeLessThan('one two three four five six seven eight nine ten eleven twelve'.length)
  })
})

describe('chat answers: usage, proposals as sentences, retries, value hints', () => {
  const stored = async (client: Client, chatId: string) => (await client.get(`/api/chats/${chatId}`)).body

  it('stores each answer\'s token usage and returns it per message and per chat', async () => {
    const chatId = await newChat(team.member)
    model.enqueue(
      { toolCalls: [{ name: 'query_database', input: { sql: 'select count(*) from tasks' } }], usage: { input: 120, output: 7 } },
      { text: 'Counted.', usage: { input: 150, output: 4 } },
    )
    await ask(team.member, chatId, 'How many tasks?')
    model.enqueue({ text: 'Hello again.', usage: { input: 90, output: 3 } })
    await ask(team.member, chatId, 'Hi')
    const chat = await stored(team.member, chatId)
    expect(chat.messages.map((m: any) => [m.role, m.metadata?.usage ?? null])).toEqual([
      ['user', null], ['assistant', { input: 270, output: 11 }], ['user', null], ['assistant', { input: 90, output: 3 }],
    ])
    expect(chat.usage).toEqual({ input: 360, output: 14 })
    const { rows } = await app.db.query('select input_tokens, output_tokens from public.chat_token_usage where chat_id = $1 order by id', [chatId])
    expect(rows).toEqual([{ input_tokens: 270, output_tokens: 11 }, { input_tokens: 90, output_tokens: 3 }])
  })

  it('words a proposed write as a sentence with names resolved in the team, and adds the approved turn\'s usage to the answer', async () => {
    const { rows: [project] } = await app.db.query(
      `insert into public.projects (team_id, created_by, name) values ($1, $2, 'Website relaunch') returning id`, [team.teamId, team.owner.user!.id])
    const { rows: [foreign] } = await app.db.query(
      `insert into public.projects (team_id, created_by, name) select team_id, user_id, 'Secret plan of another team' from public.team_members where user_id = $1 limit 1 returning id`, [team.outsider.user!.id])
    const chatId = await newChat(team.member)
    model.enqueue({ toolCalls: [
      { name: 'create_tasks', input: { title: 'Write the launch post', project_id: project.id } },
      { name: 'create_tasks', input: { title: 'Spy', project_id: foreign.id, priority: 1 } },
    ] })
    const proposal = await ask(team.member, chatId, 'Add the launch post task')
    const requests = approvalRequests(proposal)
    expect(requests).toHaveLength(2)
    const chat = await stored(team.member, chatId)
    const parts = chat.messages[1].parts.filter((p: any) => p.type === 'tool-create_tasks')
    const proposals = chat.messages[1].metadata.proposals
    expect(proposals[parts[0].toolCallId].sentence).toBe('Create task \'Write the launch post\' in project Website relaunch?')
    // another team's project is never named
    expect(proposals[parts[1].toolCallId].sentence).toBe('Create task \'Spy\' in project an unknown record with priority 1?')
    expect(JSON.stringify(chat)).not.toContain('Secret plan of another team')
    expect(chat.messages[1].metadata.usage).toEqual({ input: 100, output: 10 })

    model.enqueue({ text: 'Created one, skipped the other.' })
    await postTurn(team.member, chatId, { approvals: [{ id: requests[0].approvalId, approved: true }, { id: requests[1].approvalId, approved: false }] })
    const after = await stored(team.member, chatId)
    expect(after.messages).toHaveLength(2)
    expect(after.messages[1].metadata.usage).toEqual({ input: 200, output: 20 })
    expect(after.messages[1].metadata.proposals[parts[0].toolCallId].sentence).toBe('Create task \'Write the launch post\' in project Website relaunch?')
    expect(after.messages[1].parts).toContainEqual(expect.objectContaining({ toolCallId: parts[0].toolCallId, state: 'output-available', output: { record: expect.objectContaining({ title: 'Write the launch post', project_id: project.id }) } }))
  })

  it('returns a failed statement\'s error to the model, which retries with a good one', async () => {
    const chatId = await newChat(team.member)
    const seen: any[] = []
    model.enqueue(
      { toolCalls: [{ name: 'query_database', input: { sql: 'select nosuchcolumn from tasks' } }] },
      (request) => {
        seen.push(lastToolResult(request))
        return { toolCalls: [{ name: 'query_database', input: { sql: 'select count(*)::int as n from tasks' } }] }
      },
      request => ({ text: `There are ${lastToolResult(request).rows[0][0]} tasks.` }),
    )
    const answer = await ask(team.member, chatId, 'How many tasks?')
    expect(seen[0]).toEqual({ error: expect.stringContaining('nosuchcolumn'), attempts_left: 2, hint: expect.any(String) })
    const { rows } = await app.db.query('select count(*)::int as n from public.tasks where team_id = $1', [team.teamId])
    expect(answer.text).toBe(`There are ${rows[0].n} tasks.`)
  })

  it('stops an answer whose statements keep failing after the bound, which the prompt and the tool state', async () => {
    const chatId = await newChat(team.member)
    const before = model.requests.length
    model.fallback = () => ({ toolCalls: [{ name: 'query_database', input: { sql: 'select broken from nowhere' } }] })
    try {
      const answer = await ask(team.member, chatId, 'Loop forever')
      expect(answer.status).toBe(200)
      // three failures, then one call whose statement is not run: four model calls, not twelve
      expect(model.requests.length - before).toBe(4)
      const outputs = answer.chunks.filter(c => c.type === 'tool-output-available').map(c => c.output)
      expect(outputs.map(o => o.attempts_left)).toEqual([2, 1, 0, 0])
      expect(outputs[3].error).toMatch(/^Not run: 3 statements already failed/)
      const request = model.requests.at(-1)!
      expect(contentText(request.messages[0])).toContain('at most 3 failed statements per answer')
      expect(request.tools!.find(t => t.function.name === 'query_database')!.function.description).toContain('at most 3 statements may fail per answer')
    }
    finally {
      model.fallback = () => ({ text: 'OK.' })
    }
  })

  it('hints the values of short repeated text columns found in the team\'s own rows only', async () => {
    await app.db.query(`insert into public.notes (team_id, created_by, title) values ($1, $2, 'Zebra standup'), ($1, $2, 'Zebra standup')`, [team.teamId, team.owner.user!.id])
    const { rows: [other] } = await app.db.query('select team_id from public.team_members where user_id = $1', [team.outsider.user!.id])
    await app.db.query(`insert into public.notes (team_id, created_by, title) values ($1, $2, 'Yak retro'), ($1, $2, 'Yak retro')`, [other.team_id, team.outsider.user!.id])

    model.enqueue({ text: 'Hi.' })
    await ask(team.member, await newChat(team.member), 'Hi')
    const ours = contentText(model.requests.at(-1)!.messages[0])
    model.enqueue({ text: 'Hi.' })
    await ask(team.outsider, await newChat(team.outsider), 'Hi')
    const theirs = contentText(model.requests.at(-1)!.messages[0])

    const notesTitle = (prompt: string) => prompt.split('\n').find(line => line.startsWith('Table notes'))
      && prompt.slice(prompt.indexOf('Table notes')).split('\n').find(line => line.startsWith('  - title:'))
    expect(notesTitle(ours)).toContain('values in the team\'s rows: (\'Zebra standup\')')
    expect(notesTitle(theirs)).toContain('values in the team\'s rows: (\'Yak retro\')')
    expect(ours).not.toContain('Yak retro')
    expect(theirs).not.toContain('Zebra standup')
  })
})

describe('chat without a provider key', () => {
  let plain: TestApp
  beforeAll(async () => {
    plain = await startApp()
  })
  afterAll(() => plain?.stop())

  it('answers 404 on every chat route and says so in /api/config', async () => {
    const user = await signUp(plain)
    await user.post('/api/teams', { name: 'No chat' })
    expect((await user.get('/api/config')).body).toMatchObject({ chat_enabled: false })
    const id = randomUUID()
    expect((await user.get('/api/chats')).status).toBe(404)
    expect((await user.post('/api/chats', {})).status).toBe(404)
    expect((await user.get(`/api/chats/${id}`)).status).toBe(404)
    expect((await user.post(`/api/chats/${id}`, { regenerate: true })).status).toBe(404)
    expect((await user.patch(`/api/chats/${id}`, { title: 'x' })).status).toBe(404)
    expect((await user.delete(`/api/chats/${id}`)).status).toBe(404)
    expect((await new Client(plain).get('/api/chats')).status).toBe(404)
  })
})
