import type { PGlite, Transaction } from '@electric-sql/pglite'
import type pg from 'pg'
import { checkChatSql } from './sql-guard'

/** Where a chat statement runs: the chat pool on a Postgres server, or the embedded PGlite session. */
export type ChatQueryTarget
  = | { kind: 'postgres', pool: pg.Pool }
    | { kind: 'pglite', pglite: PGlite }

export interface ChatQueryLimits {
  /** Rows returned at most; more rows mark the result truncated. */
  rowLimit: number
  statementTimeoutMs: number
  lockTimeoutMs: number
}

export const defaultChatQueryLimits: ChatQueryLimits = { rowLimit: 100, statementTimeoutMs: 5000, lockTimeoutMs: 1000 }

export interface ChatQueryResult {
  columns: string[]
  rows: unknown[][]
  rowCount: number
  /** Set when the statement produced more than rowLimit rows. */
  truncated?: string
}

/** Runs one statement text and answers column names and rows as arrays (always the extended protocol: one statement only). */
type RunStatement = (text: string) => Promise<{ columns: string[], rows: unknown[][] }>

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// Every step is its own statement: the model's text only ever reaches DECLARE ... CURSOR FOR,
// which accepts a single query and nothing else.
function setupStatements(teamId: string, limits: ChatQueryLimits): string[] {
  if (!uuidPattern.test(teamId)) throw new Error('The chat team id is not a uuid')
  return [
    'set transaction read only',
    `set local statement_timeout = ${Math.trunc(limits.statementTimeoutMs)}`,
    `set local lock_timeout = ${Math.trunc(limits.lockTimeoutMs)}`,
    `set local idle_in_transaction_session_timeout = ${Math.trunc(limits.statementTimeoutMs * 2)}`,
    // the team the chat_reader policies compare with (team_id = current_chat_team())
    `set local app.chat_team_id = '${teamId.toLowerCase()}'`,
    'set local role chat_reader',
  ]
}

async function runSteps(run: RunStatement, sql: string, teamId: string, limits: ChatQueryLimits): Promise<ChatQueryResult> {
  for (const step of setupStatements(teamId, limits)) await run(step)
  await run(`declare chat_query no scroll cursor for\n${sql}\n`)
  const { columns, rows } = await run(`fetch forward ${limits.rowLimit + 1} from chat_query`)
  const result: ChatQueryResult = { columns, rows: rows.slice(0, limits.rowLimit), rowCount: Math.min(rows.length, limits.rowLimit) }
  if (rows.length > limits.rowLimit) {
    result.truncated = `The result has more than ${limits.rowLimit} rows; only the first ${limits.rowLimit} are shown. `
      + 'Narrow the query (a WHERE clause, an aggregate such as count(*), or a LIMIT) to see what you need.'
  }
  return result
}

async function onPostgres(pool: pg.Pool, sql: string, teamId: string, limits: ChatQueryLimits): Promise<ChatQueryResult> {
  const client = await pool.connect()
  let isBroken = false
  try {
    await client.query('begin')
    const run: RunStatement = async (text) => {
      // queryMode 'extended' (pg >= 8.9, not in its types): one statement per request, even without parameters
      const config: pg.QueryArrayConfig & { queryMode: 'extended' } = { text, values: [], rowMode: 'array', queryMode: 'extended' }
      const result = await client.query(config)
      return { columns: result.fields.map(field => field.name), rows: result.rows as unknown[][] }
    }
    return await runSteps(run, sql, teamId, limits)
  }
  finally {
    // read only: nothing to keep. DISCARD ALL drops what a statement could leave on the session
    // (advisory locks, for one); a connection that cannot be cleaned is not reused.
    await client.query('rollback').then(() => client.query('discard all')).catch(() => {
      isBroken = true
    })
    client.release(isBroken)
  }
}

class Rollback extends Error {
  constructor(readonly result: ChatQueryResult) {
    super('rollback')
  }
}

async function onPglite(pglite: PGlite, sql: string, teamId: string, limits: ChatQueryLimits): Promise<ChatQueryResult> {
  try {
    await pglite.transaction(async (tx: Transaction) => {
      const run: RunStatement = async (text) => {
        const result = await tx.query<unknown[]>(text, [], { rowMode: 'array' })
        return { columns: result.fields.map(field => field.name), rows: result.rows }
      }
      // thrown so that the transaction always ends in a rollback
      throw new Rollback(await runSteps(run, sql, teamId, limits))
    })
  }
  catch (error) {
    if (error instanceof Rollback) return error.result
    throw error
  }
  finally {
    // the one embedded session is the app's: release any session lock a statement took
    await pglite.query('select pg_advisory_unlock_all()')
  }
  throw new Error('unreachable')
}

/**
 * The database layer of query_database, without the parser: runs `sql` in a READ ONLY
 * transaction as chat_reader for `teamId`, with statement and lock timeouts and a row cap.
 * Exposed on its own so that tests can show this layer holds by itself.
 */
export function executeChatStatement(target: ChatQueryTarget, sql: string, teamId: string, limits: ChatQueryLimits = defaultChatQueryLimits): Promise<ChatQueryResult> {
  return target.kind === 'postgres'
    ? onPostgres(target.pool, sql, teamId, limits)
    : onPglite(target.pglite, sql, teamId, limits)
}

export class ChatQueryRefused extends Error {}

/** query_database: the guard first (one SELECT over `tables`), then the database layer. */
export async function runChatQuery(target: ChatQueryTarget, sql: string, teamId: string, tables: ReadonlySet<string>, limits: ChatQueryLimits = defaultChatQueryLimits): Promise<ChatQueryResult> {
  const verdict = await checkChatSql(sql, tables)
  if (!verdict.ok) throw new ChatQueryRefused(verdict.reason)
  return executeChatStatement(target, verdict.sql, teamId, limits)
}
