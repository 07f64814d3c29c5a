import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { teamWithRoles, type Client, type TeamFixture } from '../support/http'
import { startScriptedModel, type ScriptedModelServer } from '../support/openai-server'
import { hiddenTableSpellings } from '../unit/sql-guard-corpus'

let app: TestApp
let model: ScriptedModelServer
let team: TeamFixture
const maxCost = 50_000

beforeAll(async () => {
  model = await startScriptedModel()
  app = await startApp({ LLM_PROVIDER_API_KEY: 'test-key', LLM_PROVIDER_BASE_URL: model.url, LLM_MODEL: 'scripted-model', CHAT_MAX_QUERY_COST: String(maxCost) })
  team = await teamWithRoles(app)
  // 30 tasks, 10 projects and 10 notes in the team, and one audit entry a member may not read
  const owner = team.owner.user!.id
  await app.db.query(`insert into public.projects (team_id, created_by, name) select $1, $2, 'Project ' || i from generate_series(1, 10) i`, [team.teamId, owner])
  await app.db.query(`insert into public.tasks (team_id, created_by, title) select $1, $2, 'Task ' || i from generate_series(1, 30) i`, [team.teamId, owner])
  await app.db.query(`insert into public.notes (team_id, created_by, title) select $1, $2, 'Note ' || i from generate_series(1, 10) i`, [team.teamId, owner])
  await app.db.query(`insert into public.activity_log (team_id, source, table_name, record_id, action, old_data)
    values ($1, 'system', 'tasks', 'x', 'delete', '{"title": "AUDIT-SECRET"}')`, [team.teamId])
  await app.db.query('analyze')
})
afterAll(async () => {
  await app?.stop()
  await model?.close()
})

interface Turn {
  status: number
  chunks: any[]
  text: string
  finished: boolean
}

/** Posts a turn and reads the whole UI message stream (the request returns only once the stream has ended). */
async function ask(client: Client, text: string): Promise<Turn> {
  const chat = await client.post('/api/chats', {})
  expect(chat.status).toBe(201)
  const answer = await client.post(`/api/chats/${chat.body.id}`, { message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] } })
  const raw = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)
  const lines = raw.split('\n').filter(line => line.startsWith('data: '))
  const chunks = lines.filter(line => line !== 'data: [DONE]').map(line => JSON.parse(line.slice(6)))
  return {
    status: answer.status,
    chunks,
    text: chunks.filter(c => c.type === 'text-delta').map(c => c.delta).join(''),
    finished: lines.includes('data: [DONE]') && chunks.some(c => c.type === 'finish'),
  }
}

/** Has the model run one statement, then answer with a fixed sentence; returns what query_database answered. */
async function runThroughChat(client: Client, sql: string): Promise<{ turn: Turn, output: any }> {
  model.enqueue({ toolCalls: [{ name: 'query_database', input: { sql } }] }, { text: 'Done looking.' })
  const turn = await ask(client, 'Look this up')
  expect(turn.status).toBe(200)
  expect(turn.finished).toBe(true)
  expect(turn.text).toBe('Done looking.')
  const output = turn.chunks.find(c => c.type === 'tool-output-available')?.output
  expect(output).toBeDefined()
  return { turn, output }
}

describe('the chat keeps a member out of the activity log', () => {
  it.each(hiddenTableSpellings)('refuses, for a member: $name', async ({ sql }) => {
    const { output } = await runThroughChat(team.member, sql)
    expect(output.error).toMatch(/^Refused: the table (public\.)?activity_log is not available; tables you can query: notes, projects, tasks$/)
    expect(JSON.stringify(output)).not.toContain('AUDIT-SECRET')
  })

  it('answers the same statement to an owner, who may view the log', async () => {
    const { output } = await runThroughChat(team.owner, 'with activity_log as (select * from activity_log) select old_data->>\'title\' from activity_log where action = \'delete\'')
    expect(output.rows).toEqual([['AUDIT-SECRET']])
  })
})

describe('a NUL character in a chat statement', () => {
  it('answers the model an error and the stream ends normally', async () => {
    const { output } = await runThroughChat(team.member, 'select \'a\u0000b\' as x from tasks')
    expect(output.error).toMatch(/NUL character/)
    // the chat still works afterwards
    const next = await runThroughChat(team.member, 'select count(*) from tasks')
    expect(next.output.rows).toEqual([[30]])
  })
})

describe('the cost guard', () => {
  it('refuses a large cross join of the team\'s tables without running it, saying so with the cost and the limit', async () => {
    // had it run, its first row would divide by zero and the model would get that error instead
    const { output } = await runThroughChat(team.member, 'select t.priority / (t.priority - t.priority) from tasks t, tasks u, projects p, notes n, tasks v, notes w')
    expect(output.error).toMatch(new RegExp(`^Refused: the statement is too expensive to run: its estimated cost is \\d+ and the limit is ${maxCost}\\. .*WHERE.*LIMIT`))
    expect(Number(output.error.match(/cost is (\d+)/)[1])).toBeGreaterThan(maxCost)
  })

  it('runs a normal query', async () => {
    const { output } = await runThroughChat(team.member, 'select p.name, count(t.id) from projects p left join tasks t on t.project_id = p.id group by p.name order by p.name limit 3')
    expect(output.rows).toEqual([['Project 1', 0], ['Project 10', 0], ['Project 2', 0]])
  })
})
