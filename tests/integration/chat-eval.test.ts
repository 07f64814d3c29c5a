import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { evalQuestions } from '../../scripts/eval-chat/questions'
import { contentText, startScriptedModel, type CompletionRequest, type ScriptedModelServer } from '../support/openai-server'

// The eval harness against a scripted model that knows the answers: it replays the reference
// statement of most questions, and for every fourth one ends on a wrong statement (after the
// reference one, so that only the final result counts) or on a failing one only.
let model: ScriptedModelServer
const answeredWrong = (index: number) => index % 4 === 3

function script(request: CompletionRequest) {
  const lastUser = request.messages.findLastIndex(m => m.role === 'user')
  const index = evalQuestions.findIndex(q => q.question === contentText(request.messages[lastUser]))
  const toolResults = request.messages.slice(lastUser).filter(m => m.role === 'tool').length
  if (index < 0) return { text: 'I do not know this question.' }
  const reference = evalQuestions[index]!.reference
  const plan = !answeredWrong(index) ? [reference] : index % 8 === 3 ? [reference, 'select 1 as wrong'] : ['select nosuchcolumn from tasks']
  const sql = plan[toolResults]
  return sql ? { toolCalls: [{ name: 'query_database', input: { sql } }] } : { text: 'Here is the answer.' }
}

beforeAll(async () => {
  model = await startScriptedModel(script)
})
afterAll(() => model?.close())

function runHarness(env: Record<string, string>): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npx', ['tsx', 'scripts/eval-chat.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('close', code => resolve({ code, stdout, stderr }))
  })
}

describe('npm run eval:chat', () => {
  it('scores the final query result of each question against the expected rows and lists each miss', async () => {
    expect(evalQuestions.length).toBeGreaterThanOrEqual(30)
    const { code, stdout, stderr } = await runHarness({ LLM_PROVIDER_API_KEY: 'test-key', LLM_PROVIDER_BASE_URL: model.url, LLM_MODEL: 'scripted-model' })
    expect(code, stderr).toBe(0)
    const wrong = evalQuestions.filter((_, index) => answeredWrong(index))
    const right = evalQuestions.length - wrong.length
    expect(stdout).toContain(`Score: ${right}/${evalQuestions.length} (${Math.round((right / evalQuestions.length) * 100)}%)`)
    for (const [index, question] of evalQuestions.entries()) {
      expect(stdout).toContain(`${answeredWrong(index) ? 'MISS' : 'PASS'} ${String(index + 1).padStart(2)}. ${question.question}`)
    }
    const misses = stdout.slice(stdout.indexOf('Misses:'))
    expect(misses).toContain('got:      [[1]]\n    sql:      select 1 as wrong')
    expect(misses).toContain('problem:  no query succeeded')
    // each question was asked in its own chat, through the app's tools
    expect(model.requests.filter(r => r.tools?.some(t => t.function.name === 'query_database')).length).toBeGreaterThan(evalQuestions.length)
  }, 300_000)

  it('refuses to run without a model key', async () => {
    const { code, stderr } = await runHarness({ LLM_PROVIDER_API_KEY: '' })
    expect(code).toBe(2)
    expect(stderr).toContain('Set LLM_PROVIDER_API_KEY')
  }, 60_000)
})
