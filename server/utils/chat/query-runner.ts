import type { PGlite, Transaction } from '@electric-sql/pglite'
import type pg from 'pg'
import { uuidPattern } from '#shared/utils/patterns'
import { setting } from '../settings'
import { checkChatSql, nulReason } from './sql-guard'

/** Where a chat statement runs: the chat pool on a Postgres server, or the embedded PGlite session. */
export type ChatQueryTarget
  = | { kind: 'postgres', pool: pg.Pool }
    | { kind: 'pglite', pglite: PGlite }

/** Whose statement it is: the team whose rows it may see, and the tables its user may view. */
export interface ChatReader {
  teamId: string
  tables: ReadonlySet<string>
}

export interface ChatQueryLimits {
  /** Rows returned at most; more rows mark the result truncated. */
  rowLimit: number
  statementTimeoutMs: number
  lockTimeoutMs: number
  /** The planner's total cost (EXPLAIN) above which a statement is refused without running. */
  maxCost: number
}

export const defaultChatQueryLimits: ChatQueryLimits = { rowLimit: 100, statementTimeoutMs: 5000, lockTimeoutMs: 1000, maxCost: 100_000 }

/** The default limits with CHAT_MAX_QUERY_COST applied (read inside the server only). */
export function chatQueryLimits(): ChatQueryLimits {
  const maxCost = Number(setting('chatMaxQueryCost'))
  return { ...defaultChatQueryLimits, ...(maxCost > 0 ? { maxCost } : {}) }
}

export interface ChatQueryResult {
  columns: string[]
  rows: unknown[][]
  rowCount: number
  /** Set when the statement produced more than rowLimit rows. */
  truncated?: string
}

/** Runs one statement text and answers column names and rows as arrays (always the extended protocol: one statement only). */
type RunStatement = (text: string) => Promise<{ columns: string[], rows: unknown[][] }>

const tableNamePattern = /^[a-z_][a-z0-9_]*$/

export class ChatQueryRefused extends Error {}

// Every step is its own statement: the model's text only ever reaches EXPLAIN and DECLARE ...
// CURSOR FOR, which accept a single query and nothing else.
function setupStatements({ teamId, tables }: ChatReader, limits: ChatQueryLimits): string[] {
  if (!uuidPattern.test(teamId)) throw new Error('The chat team id is not a uuid')
  if (![...tables].every(table => tableNamePattern.test(table))) throw new Error('A chat table name is not a plain identifier')
  return [
    'set transaction read only',
    `set local statement_timeout = ${Math.trunc(limits.statementTimeoutMs)}`,
    `set local lock_timeout = ${Math.trunc(limits.lockTimeoutMs)}`,
    `set local idle_in_transaction_session_timeout = ${Math.trunc(limits.statementTimeoutMs * 2)}`,
    // the team the chat_reader policies compare with (team_id = current_chat_team())
    `set local app.chat_team_id = '${teamId.toLowerCase()}'`,
    // the tables the chat_reader policies let it read (chat_team_for())
    `set local app.chat_tables = '${[...tables].join(',')}'`,
    'set local role chat_reader',
  ]
}

/** The planner's total cost of the statement (EXPLAIN plans it without running it). */
async function plannedCost(run: RunStatement, sql: string): Promise<number> {
  const { rows } = await run(`explain (format json)\n${sql}\n`)
  const plan = rows[0]?.[0]
  const parsed = (typeof plan === 'string' ? JSON.parse(plan) : plan) as { Plan?: { 'Total Cost'?: number } }[]
  const cost = parsed?.[0]?.Plan?.['Total Cost']
  if (typeof cost !== 'number') throw new Error('EXPLAIN answered no total cost')
  return cost
}

async function runSteps(run: RunStatement, sql: string, reader: ChatReader, limits: ChatQueryLimits): Promise<ChatQueryResult> {
  for (const step of setupStatements(reader, limits)) await run(step)
  // the only cut on PGlite, which cannot fire statement_timeout: a heavy statement never starts
  const cost = await plannedCost(run, sql)
  if (cost > limits.maxCost) {
    throw new ChatQueryRefused(`the statement is too expensive to run: its estimated cost is ${Math.round(cost)} and the limit is ${limits.maxCost}. `
      + 'Filter the rows (WHERE), join on keys instead of cross joins, aggregate (count(*), group by) or add a LIMIT, then try again.')
  }
  await run(`declare chat_query no scroll cursor for\n${sql}\n`)
  const { columns, rows } = await run(`fetch forward ${limits.rowLimit + 1} from chat_query`)
  const result: ChatQueryResult = { columns, rows: rows.slice(0, limits.rowLimit), rowCount: Math.min(rows.length, limits.rowLimit) }
  if (rows.length > limits.rowLimit) {
    result.truncated = `The result has more than ${limits.rowLimit} rows; only the first ${limits.rowLimit} are shown. `
      + 'Narrow the query (a WHERE clause, an aggregate such as count(*), or a LIMIT) to see what you need.'
  }
  return result
}

async function onPostgres(pool: pg.Pool, sql: string, reader: ChatReader, limits: ChatQueryLimits): Promise<ChatQueryResult> {
  const client = await pool.connect()
  let isBroken = false
  try {
    // everything happens in one transaction, which is all a transaction-mode pooler keeps on one
    // server connection: the team setting and role (set local), and the clean-up below
    await client.query('begin')
    await client.query('savepoint chat_statement')
    const run: RunStatement = async (text) => {
      // queryMode 'extended' (pg >= 8.9, not in its types): one statement per request, even without parameters
      const config: pg.QueryArrayConfig & { queryMode: 'extended' } = { text, values: [], rowMode: 'array', queryMode: 'extended' }
      const result = await client.query(config)
      return { columns: result.fields.map(field => field.name), rows: result.rows as unknown[][] }
    }
    return await runSteps(run, sql, reader, limits)
  }
  finally {
    // read only: nothing to keep. A session advisory lock outlives a rollback, so it is released
    // before the transaction ends, back in the login role (the savepoint undoes `set local role`),
    // on the same server connection even behind a pooler. A connection that cannot be cleaned is
    // not reused.
    await client.query('rollback to savepoint chat_statement')
      .then(() => client.query('select pg_advisory_unlock_all()'))
      .then(() => client.query('rollback'))
      .catch(() => {
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

async function onPglite(pglite: PGlite, sql: string, reader: ChatReader, limits: ChatQueryLimits): Promise<ChatQueryResult> {
  try {
    await pglite.transaction(async (tx: Transaction) => {
      const run: RunStatement = async (text) => {
        const result = await tx.query<unknown[]>(text, [], { rowMode: 'array' })
        return { columns: result.fields.map(field => field.name), rows: result.rows }
      }
      // thrown so that the transaction always ends in a rollback
      throw new Rollback(await runSteps(run, sql, reader, limits))
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
 * transaction as chat_reader for the reader's team and tables, refusing it when its planned cost
 * is over the limit, with statement and lock timeouts and a row cap.
 * Exposed on its own so that tests can show this layer holds by itself.
 */
export async function executeChatStatement(target: ChatQueryTarget, sql: string, reader: ChatReader, limits: ChatQueryLimits = defaultChatQueryLimits): Promise<ChatQueryResult> {
  // a NUL would end the statement early on the wire and leave the protocol out of step
  if (sql.includes('\u0000')) throw new ChatQueryRefused(nulReason)
  return target.kind === 'postgres'
    ? onPostgres(target.pool, sql, reader, limits)
    : onPglite(target.pglite, sql, reader, limits)
}

/** query_database: the guard first (one SELECT over `tables`), then the database layer. */
export async function runChatQuery(target: ChatQueryTarget, sql: string, teamId: string, tables: ReadonlySet<string>, limits?: ChatQueryLimits): Promise<ChatQueryResult> {
  const verdict = await checkChatSql(sql, tables)
  if (!verdict.ok) throw new ChatQueryRefused(verdict.reason)
  return executeChatStatement(target, verdict.sql, { teamId, tables }, limits ?? chatQueryLimits())
}
