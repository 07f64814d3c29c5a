import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { startApp } from '../harness/app'
import { Client } from '../harness/http'
import { resultMatches } from './compare'
import type { EvalQuestion } from './questions'

/** What one question came to: the last successful query's rows, or why there were none. */
export interface EvalOutcome {
  question: EvalQuestion
  matched: boolean
  sql?: string
  rows?: unknown[][]
  problem?: string
}

interface StreamChunk {
  type: string
  toolCallId?: string
  toolName?: string
  input?: { sql?: string }
  output?: { rows?: unknown[][], error?: string }
  errorText?: string
}

/** Asks one question in a new chat and reads the answer's stream. */
async function ask(client: Client, question: string): Promise<StreamChunk[]> {
  const chat = await client.post('/api/chats', {})
  if (chat.status !== 201) throw new Error(`POST /api/chats answered ${chat.status}: ${JSON.stringify(chat.body)}`)
  const answer = await client.post(`/api/chats/${chat.body.id}`, { message: { id: randomUUID(), role: 'user', parts: [{ type: 'text', text: question }] } })
  if (answer.status !== 200) throw new Error(`the turn answered ${answer.status}: ${JSON.stringify(answer.body)}`)
  const raw = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)
  return raw.split('\n').filter(line => line.startsWith('data: ') && line !== 'data: [DONE]').map(line => JSON.parse(line.slice(6)) as StreamChunk)
}

/** The final successful query_database call of an answer. */
function finalQuery(chunks: StreamChunk[]): { sql?: string, rows?: unknown[][], problem?: string } {
  const inputs = new Map(chunks.filter(c => c.type === 'tool-input-available' && c.toolName === 'query_database').map(c => [c.toolCallId, c.input?.sql]))
  const results = chunks.filter(c => c.type === 'tool-output-available' && inputs.has(c.toolCallId) && !c.output?.error && Array.isArray(c.output?.rows))
  const last = results.at(-1)
  if (last) return { sql: inputs.get(last.toolCallId), rows: last.output!.rows }
  const error = chunks.find(c => c.type === 'error')?.errorText
  return { problem: error ? `the answer failed: ${error}` : inputs.size ? 'no query succeeded' : 'no query was made' }
}

/**
 * Runs the questions against the built app on a fresh database (PGlite, or a new database on
 * the server of TEST_DATABASE_URL when TEST_DB_KIND=postgres) loaded with the demo seed, with the
 * chat model of `env` (the LLM_PROVIDER_* settings), as the demo user.
 */
export async function runEval(questions: EvalQuestion[], env: Record<string, string>, onOutcome: (outcome: EvalOutcome, index: number) => void): Promise<EvalOutcome[]> {
  const app = await startApp(env)
  try {
    // the app seeds the demo data itself on an empty embedded database; elsewhere the harness does
    const { rowCount } = await app.db.query(`select 1 from auth.users where email = 'demo@example.com'`)
    if (!rowCount) await app.db.query(readFileSync(new URL('../../supabase/seed.sql', import.meta.url), 'utf8'))
    const client = new Client(app)
    const login = await client.post('/api/auth/login', { email: 'demo@example.com', password: 'demo-password' })
    if (login.status !== 200) throw new Error(`sign-in as the demo user failed: ${login.status} ${JSON.stringify(login.body)}`)
    const outcomes: EvalOutcome[] = []
    for (const [index, question] of questions.entries()) {
      let outcome: EvalOutcome
      try {
        const final = finalQuery(await ask(client, question.question))
        outcome = { question, matched: Boolean(final.rows && resultMatches(question.expected, final.rows)), ...final }
      }
      catch (error) {
        outcome = { question, matched: false, problem: (error as Error).message }
      }
      outcomes.push(outcome)
      onOutcome(outcome, index)
    }
    return outcomes
  }
  finally {
    await app.stop()
  }
}
