import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { postTurn, userMessage, type ChatTurn } from '../support/chat'
import { appWithModelForFile } from '../support/file-hooks'
import type { Client, TeamFixture } from '../support/http'
import type { ScriptedModelServer } from '../support/openai-server'
import { hiddenTableSpellings } from '../unit/sql-guard-corpus'

let app: TestApp
let model: ScriptedModelServer
let team: TeamFixture
const maxCost = 50_000

appWithModelForFile(() => ({ CHAT_MAX_QUERY_COST: String(maxCost) }), async (started) => {
  ({ app, model, team } = started)
  // 30 tasks, 10 projects and 10 notes in the team, and one audit entry a member may not read
  const owner = team.owner.user!.id
  await app.db.query(`insert into public.projects (team_id, created_by, name) select $1, $2, 'Project ' || i from generate_series(1, 10) i`, [team.teamId, owner])
  await app.db.query(`insert into public.tasks (team_id, created_by, title) select $1, $2, 'Task ' || i from generate_series(1, 30) i`, [team.teamId, owner])
  await app.db.query(`insert into public.notes (team_id, created_by, title) select $1, $2, 'Note ' || i from generate_series(1, 10) i`, [team.teamId, owner])
  await app.db.query(`insert into public.activity_log (team_id, source, table_name, record_id, action, old_data)
    values ($1, 'system', 'tasks', 'x', 'delete', '{"title": "AUDIT-SECRET"}')`, [team.teamId])
  await app.db.query('analyze')
})

/** Asks `text` in a new chat and reads the whole answer. */
async function ask(client: Client, text: string): Promise<ChatTurn> {
  const chat = await client.post('/api/chats', {})
  expect(chat.status).toBe(201)
  return postTurn(client, chat.body.id, userMessage(text))
}

/** Has the model run one statement, then answer with a fixed sentence; returns what query_database answered. */
async function runThroughChat(client: Client, sql: string): Promise<{ turn: ChatTurn, output: any }> {
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
