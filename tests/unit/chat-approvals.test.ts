import { convertToModelMessages, readUIMessageStream, stepCountIs, streamText, tool, type UIMessage } from 'ai'
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { applyApprovals, denyPending, pendingApprovals } from '../../server/utils/chat/approvals'

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

/** A write tool like the chat's: it asks for approval and records what it wrote. */
function writeTool(written: unknown[]) {
  return {
    create_tasks: tool({
      inputSchema: z.object({ title: z.string() }),
      needsApproval: true,
      execute: async (input) => {
        written.push(input)
        return { record: input }
      },
    }),
  }
}

/** Runs one turn like the chat route: the model continues `history`; answers the last message. */
async function runTurn(model: MockLanguageModelV3, history: UIMessage[], tools: ReturnType<typeof writeTool>): Promise<UIMessage> {
  const result = streamText({ model, messages: await convertToModelMessages(history, { tools }), tools, stopWhen: stepCountIs(5) })
  let last: UIMessage | undefined
  for await (const message of readUIMessageStream({ stream: result.toUIMessageStream({ originalMessages: history }), message: history.at(-1)?.role === 'assistant' ? history.at(-1) : undefined })) last = message
  return structuredClone(last!)
}

const question: UIMessage = { id: 'q1', role: 'user', parts: [{ type: 'text', text: 'Add a task' }] }

describe('tool approvals of chat writes (MockLanguageModelV3)', () => {
  it('runs an approved write once, after the approval', async () => {
    const written: unknown[] = []
    const tools = writeTool(written)
    const model = scriptedModel([{ toolCall: { name: 'create_tasks', input: { title: 'Book the venue' } } }, { text: 'Created.' }])
    const proposal = await runTurn(model, [question], tools)
    const [pending] = pendingApprovals(proposal)
    expect(pending).toMatchObject({ type: 'tool-create_tasks', state: 'approval-requested', input: { title: 'Book the venue' } })
    expect(written).toEqual([])

    applyApprovals(proposal, [{ id: (pending as { approval: { id: string } }).approval.id, approved: true }])
    const answer = await runTurn(model, [question, proposal], tools)
    expect(written).toEqual([{ title: 'Book the venue' }])
    expect(answer.parts).toContainEqual(expect.objectContaining({ type: 'tool-create_tasks', state: 'output-available', output: { record: { title: 'Book the venue' } } }))
    expect(answer.parts).toContainEqual(expect.objectContaining({ type: 'text', text: 'Created.' }))
  })

  it('writes nothing when the write is denied, and tells the model', async () => {
    const written: unknown[] = []
    const tools = writeTool(written)
    const model = scriptedModel([{ toolCall: { name: 'create_tasks', input: { title: 'Never' } } }, { text: 'Understood.' }])
    const proposal = await runTurn(model, [question], tools)
    const [pending] = pendingApprovals(proposal)
    applyApprovals(proposal, [{ id: (pending as { approval: { id: string } }).approval.id, approved: false, reason: 'not now' }])
    const answer = await runTurn(model, [question, proposal], tools)
    expect(written).toEqual([])
    expect(answer.parts).toContainEqual(expect.objectContaining({ type: 'tool-create_tasks', state: 'output-denied' }))
    const prompt = model.doStreamCalls.at(-1)!.prompt
    expect(JSON.stringify(prompt)).toContain('execution-denied')
  })

  it('refuses an approval that names no pending call, and one left unanswered', async () => {
    const model = scriptedModel([{ toolCall: { name: 'create_tasks', input: { title: 'A' } } }])
    const proposal = await runTurn(model, [question], writeTool([]))
    expect(() => applyApprovals(proposal, [{ id: 'forged', approved: true }])).toThrow(expect.objectContaining({ statusCode: 409 }))
    expect(() => applyApprovals(proposal, [])).toThrow(expect.objectContaining({ statusCode: 400 }))
    const id = (pendingApprovals(proposal)[0] as { approval: { id: string } }).approval.id
    applyApprovals(proposal, [{ id, approved: true }])
    // answered once: it is no longer pending
    expect(() => applyApprovals(proposal, [{ id, approved: true }])).toThrow(expect.objectContaining({ statusCode: 409 }))
  })

  it('records pending writes as denied when the user sends a new message instead', async () => {
    const written: unknown[] = []
    const tools = writeTool(written)
    const model = scriptedModel([{ toolCall: { name: 'create_tasks', input: { title: 'Skipped' } } }, { text: 'Fine.' }])
    const proposal = await runTurn(model, [question], tools)
    expect(denyPending(proposal)).toBe(true)
    expect(pendingApprovals(proposal)).toEqual([])
    const next: UIMessage = { id: 'q2', role: 'user', parts: [{ type: 'text', text: 'Never mind' }] }
    const answer = await runTurn(model, [question, proposal, next], tools)
    expect(written).toEqual([])
    expect(answer.parts).toContainEqual(expect.objectContaining({ type: 'text', text: 'Fine.' }))
  })
})
