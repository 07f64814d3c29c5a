import { randomUUID } from 'node:crypto'
import { createError } from 'h3'
import { convertToModelMessages, readUIMessageStream, stepCountIs, streamText, type ToolSet, type UIMessage } from 'ai'
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { applyApprovals, denyPending, pendingApprovals } from '../../server/utils/chat/approvals'
import { tablePermissions } from '../../server/utils/chat/table-permissions'
import { newTurnState, writeTools, type ChatTurnState } from '../../server/utils/chat/tools'
import { createDatabase, type Database } from '../../server/utils/db/db-drivers'
import { runMigrations } from '../../server/utils/db/migrations'
import { readCatalog, type TableInfo } from '../../server/utils/records/table-registry'
import { parseInput } from '../../server/utils/validation'
import { loadMigrationFiles } from '../../scripts/load-migrations'
import { makeUser } from '../support/database'

// The real write tools of the chat (built from the registry, writing through the audited client)
// on a migrated in-memory PGlite; only the language model is scripted. The server's auto-imported
// helpers are the real ones, made global as Nitro does, and the registry is this database's catalog.
vi.stubGlobal('createError', createError)
vi.stubGlobal('parseInput', parseInput)
vi.mock('../../server/utils/records/table-registry', async importOriginal => ({
  ...await importOriginal<typeof import('../../server/utils/records/table-registry')>(),
  useTableRegistry: async () => catalog,
}))

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }

/** A model that answers each call with the next scripted reply: a tool call, or text. */
function scriptedModel(replies: ({ toolCall: { name: string, input: unknown } } | { text: string })[]) {
  let call = 0
  return new MockLanguageModelV3({
    doStream: async () => {
      const reply = replies[call++] ?? { text: 'OK.' }
      const chunks = 'text' in reply
        ? [
            { type: 'text-start' as const, id: 't' },
            { type: 'text-delta' as const, id: 't', delta: reply.text },
            { type: 'text-end' as const, id: 't' },
            { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage },
          ]
        : [
            { type: 'tool-call' as const, toolCallId: `call-${call}`, toolName: reply.toolCall.name, input: JSON.stringify(reply.toolCall.input) },
            { type: 'finish' as const, finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' }, usage },
          ]
      return { stream: simulateReadableStream({ chunks }) }
    },
  })
}

let db: Database
let catalog: Map<string, TableInfo>
let chatTables: Map<string, TableInfo>
let teamId: string
let userId: string
let chatId: string
let projectId: string

beforeAll(async () => {
  db = createDatabase({ dataDir: 'memory://' })
  await runMigrations(db, loadMigrationFiles())
  catalog = await readCatalog(db)
  chatTables = new Map(Object.keys(tablePermissions).map(name => [name, catalog.get(name)!]))
  userId = await makeUser(db, 'approver')
  teamId = (await db.query<{ id: string }>(`insert into public.teams (name) values ('Approvals') returning id`)).rows[0]!.id
  await db.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'owner')`, [teamId, userId])
  chatId = (await db.query<{ id: string }>(`insert into public.chats (team_id, user_id) values ($1, $2) returning id`, [teamId, userId])).rows[0]!.id
  projectId = (await db.query<{ id: string }>(`insert into public.projects (team_id, created_by, name) values ($1, $2, 'Website relaunch') returning id`, [teamId, userId])).rows[0]!.id
}, 60_000)
afterAll(() => db?.close())

/** The chat's real write tools for an owner of the team (every create, update and delete). */
function realTools(state: ChatTurnState = newTurnState()): Promise<ToolSet> {
  return writeTools(chatTables, catalog, { db, userId, teamId, role: 'owner' }, chatId, state)
}

/** Runs one turn like the chat route: the model continues `history`; answers the last message. */
async function runTurn(model: MockLanguageModelV3, history: UIMessage[], tools: ToolSet): Promise<UIMessage> {
  const result = streamText({ model, messages: await convertToModelMessages(history, { tools }), tools, stopWhen: stepCountIs(5) })
  let last: UIMessage | undefined
  for await (const message of readUIMessageStream({ stream: result.toUIMessageStream({ originalMessages: history }), message: history.at(-1)?.role === 'assistant' ? history.at(-1) : undefined })) last = message
  return structuredClone(last!)
}

const question: UIMessage = { id: 'q1', role: 'user', parts: [{ type: 'text', text: 'Change the data' }] }
const approvalIdOf = (part: unknown) => (part as { approval: { id: string } }).approval.id

async function count(sql: string, params: unknown[] = []): Promise<number> {
  return (await db.query<{ n: number }>(`select count(*)::int as n from ${sql}`, params)).rows[0]!.n
}

async function newTask(title: string): Promise<string> {
  return (await db.query<{ id: string }>(`insert into public.tasks (team_id, created_by, title) values ($1, $2, $3) returning id`, [teamId, userId, title])).rows[0]!.id
}

describe('approvals of the chat\'s real write tools (MockLanguageModelV3)', () => {
  it('has a write tool per table and action, and every one waits for approval without writing', async () => {
    const tools = await realTools()
    const names = Object.keys(tools).sort()
    expect(names).toEqual(['create_notes', 'create_projects', 'create_tasks', 'delete_notes', 'delete_projects', 'delete_tasks', 'update_notes', 'update_projects', 'update_tasks'])
    const taskId = await newTask('Keep me')
    const noteId = (await db.query<{ id: string }>(`insert into public.notes (team_id, created_by, title) values ($1, $2, 'Keep me too') returning id`, [teamId, userId])).rows[0]!.id
    const inputs: Record<string, unknown> = {
      create_notes: { title: 'New note' },
      create_projects: { name: 'New project' },
      create_tasks: { title: 'New task' },
      update_notes: { id: noteId, title: 'Renamed' },
      update_projects: { id: projectId, name: 'Renamed' },
      update_tasks: { id: taskId, title: 'Renamed' },
      delete_notes: { id: noteId },
      delete_projects: { id: projectId },
      delete_tasks: { id: taskId },
    }
    const activityBefore = await count('public.activity_log where team_id = $1', [teamId])
    for (const name of names) {
      const proposal = await runTurn(scriptedModel([{ toolCall: { name, input: inputs[name] } }]), [question], tools)
      expect(pendingApprovals(proposal), name).toEqual([expect.objectContaining({ type: `tool-${name}`, state: 'approval-requested' })])
    }
    // nothing was written: same rows, same names, no activity
    expect(await count('public.activity_log where team_id = $1', [teamId])).toBe(activityBefore)
    expect(await count(`public.tasks where id = $1 and title = 'Keep me'`, [taskId])).toBe(1)
    expect(await count(`public.notes where id = $1 and title = 'Keep me too'`, [noteId])).toBe(1)
    expect(await count(`public.projects where id = $1 and name = 'Website relaunch'`, [projectId])).toBe(1)
    expect(await count(`public.tasks where title = 'New task'`)).toBe(0)
  })

  it('runs an approved create once, after the approval, through the audited client with source chat, and words it with the project\'s name', async () => {
    const state = newTurnState()
    const tools = await realTools(state)
    const model = scriptedModel([{ toolCall: { name: 'create_tasks', input: { title: 'Write the launch post', project_id: projectId } } }, { text: 'Created.' }])
    const proposal = await runTurn(model, [question], tools)
    const [pending] = pendingApprovals(proposal)
    expect(state.proposals.get(pending!.toolCallId)).toEqual({ sentence: 'Create task \'Write the launch post\' in project Website relaunch?', names: { [projectId]: 'Website relaunch' } })
    expect(await count(`public.tasks where title = 'Write the launch post'`)).toBe(0)

    applyApprovals(proposal, [{ id: approvalIdOf(pending), approved: true }])
    const answer = await runTurn(model, [question, proposal], tools)
    expect(answer.parts).toContainEqual(expect.objectContaining({ type: 'tool-create_tasks', state: 'output-available', output: { record: expect.objectContaining({ title: 'Write the launch post', project_id: projectId }) } }))
    expect(await count(`public.tasks where team_id = $1 and title = 'Write the launch post'`, [teamId])).toBe(1)
    const { rows } = await db.query(`select actor_id, source, source_ref, action from public.activity_log where table_name = 'tasks' and new_data ->> 'title' = 'Write the launch post'`)
    expect(rows).toEqual([{ actor_id: userId, source: 'chat', source_ref: chatId, action: 'insert' }])
  })

  it('deletes nothing when the delete is denied, and tells the model', async () => {
    const taskId = await newTask('Do not delete')
    const tools = await realTools()
    const model = scriptedModel([{ toolCall: { name: 'delete_tasks', input: { id: taskId } } }, { text: 'Understood.' }])
    const proposal = await runTurn(model, [question], tools)
    const [pending] = pendingApprovals(proposal)
    applyApprovals(proposal, [{ id: approvalIdOf(pending), approved: false, reason: 'not now' }])
    const answer = await runTurn(model, [question, proposal], tools)
    expect(answer.parts).toContainEqual(expect.objectContaining({ type: 'tool-delete_tasks', state: 'output-denied' }))
    expect(await count('public.tasks where id = $1', [taskId])).toBe(1)
    expect(JSON.stringify(model.doStreamCalls.at(-1)!.prompt)).toContain('execution-denied')
  })

  it('refuses an approval that names no pending call, and one left unanswered', async () => {
    const model = scriptedModel([{ toolCall: { name: 'create_tasks', input: { title: 'A' } } }])
    const proposal = await runTurn(model, [question], await realTools())
    expect(() => applyApprovals(proposal, [{ id: 'forged', approved: true }])).toThrow(expect.objectContaining({ statusCode: 409 }))
    expect(() => applyApprovals(proposal, [])).toThrow(expect.objectContaining({ statusCode: 400 }))
    const id = approvalIdOf(pendingApprovals(proposal)[0])
    applyApprovals(proposal, [{ id, approved: true }])
    // answered once: it is no longer pending
    expect(() => applyApprovals(proposal, [{ id, approved: true }])).toThrow(expect.objectContaining({ statusCode: 409 }))
  })

  it('records pending writes as denied when the user sends a new message instead', async () => {
    const tools = await realTools()
    const title = `Skipped ${randomUUID()}`
    const model = scriptedModel([{ toolCall: { name: 'create_tasks', input: { title } } }, { text: 'Fine.' }])
    const proposal = await runTurn(model, [question], tools)
    expect(denyPending(proposal)).toBe(true)
    expect(pendingApprovals(proposal)).toEqual([])
    const next: UIMessage = { id: 'q2', role: 'user', parts: [{ type: 'text', text: 'Never mind' }] }
    const answer = await runTurn(model, [question, proposal, next], tools)
    expect(answer.parts).toContainEqual(expect.objectContaining({ type: 'text', text: 'Fine.' }))
    expect(await count('public.tasks where title = $1', [title])).toBe(0)
  })
})
