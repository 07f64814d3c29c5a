/**
 * npm run eval:chat — how often the chat's prompt, schema hints and tools lead a model to the
 * right answer. Asks every question of scripts/eval-chat/questions.ts over the demo data, with the
 * model named by LLM_PROVIDER_API_KEY, LLM_PROVIDER_BASE_URL and LLM_MODEL, and prints the share
 * of questions whose final query result matches the expected rows, with each miss.
 *
 * Runs the built app (npm run build first) on a fresh embedded database; with
 * EVAL_DATABASE_URL (a Postgres server URL) on a new database of that server instead.
 */
import { existsSync } from 'node:fs'
import { outputDir } from './harness/app'
import { runEval } from './eval-chat/harness'
import { evalQuestions } from './eval-chat/questions'

const apiKey = process.env.LLM_PROVIDER_API_KEY
if (!apiKey) {
  console.error('Set LLM_PROVIDER_API_KEY (and LLM_PROVIDER_BASE_URL, LLM_MODEL for a server other than OpenAI).')
  process.exit(2)
}
if (!existsSync(`${outputDir}/server/index.mjs`)) {
  console.error(`No build in ${outputDir}: run npm run build first.`)
  process.exit(2)
}
if (process.env.EVAL_DATABASE_URL) {
  process.env.TEST_DB_KIND = 'postgres'
  process.env.TEST_DATABASE_URL = process.env.EVAL_DATABASE_URL
}

const env: Record<string, string> = { LLM_PROVIDER_API_KEY: apiKey }
if (process.env.LLM_PROVIDER_BASE_URL) env.LLM_PROVIDER_BASE_URL = process.env.LLM_PROVIDER_BASE_URL
if (process.env.LLM_MODEL) env.LLM_MODEL = process.env.LLM_MODEL

console.log(`Asking ${evalQuestions.length} questions (model ${process.env.LLM_MODEL || 'default'}${process.env.LLM_PROVIDER_BASE_URL ? ` at ${process.env.LLM_PROVIDER_BASE_URL}` : ''})`)
const outcomes = await runEval(evalQuestions, env, (outcome, index) => {
  console.log(`${outcome.matched ? 'PASS' : 'MISS'} ${String(index + 1).padStart(2)}. ${outcome.question.question}`)
})

const misses = outcomes.filter(outcome => !outcome.matched)
if (misses.length) console.log('\nMisses:')
for (const miss of misses) {
  console.log(`- ${miss.question.question}`)
  console.log(`    expected: ${JSON.stringify(miss.question.expected)}`)
  if (miss.problem) console.log(`    problem:  ${miss.problem}`)
  else console.log(`    got:      ${JSON.stringify(miss.rows)}\n    sql:      ${miss.sql}`)
}
const passed = outcomes.length - misses.length
console.log(`\nScore: ${passed}/${outcomes.length} (${Math.round((passed / outcomes.length) * 100)}%)`)
