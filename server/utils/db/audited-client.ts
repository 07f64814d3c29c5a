import type { ActivitySource } from '#shared/utils/schemas'
import type { Database, Queryable, QueryOptions, QueryResult } from './db-drivers'

export interface AuditContext {
  actorId: string | null
  teamId: string | null
  source: ActivitySource
  /** The chat id for chat writes. */
  sourceRef?: string | null
  /** The API key of a public API write. */
  apiKeyId?: string | null
  /** The id of the request that writes (its Request-Id), for the lines it logs. */
  requestId?: string | null
}

/** The database bound to an audit context; it runs with elevated privilege, so every query filters by team itself. */
export interface AuditedClient {
  readonly context: AuditContext
  /** One statement in its own transaction, with the audit context set. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<T>>
  /** Several statements in one transaction, with the audit context set. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /**
   * One write in one round trip, without BEGIN/COMMIT: `text` starts with `with` and selects from
   * `audit_context`, a one-row CTE put before it that sets the context, so the write happens after
   * it and the AFTER triggers (activity log, webhook outbox) see it at the end of the statement.
   */
  write<T = Record<string, unknown>>(text: string, params?: unknown[], options?: Pick<QueryOptions, 'isoTimestamps'>): Promise<QueryResult<T>>
  /** A read that writes nothing, so it needs no audit context (no transaction round trips). */
  read<T = Record<string, unknown>>(text: string, params?: unknown[], options?: Pick<QueryOptions, 'isoTimestamps' | 'arrayRows'>): Promise<QueryResult<T>>
}

const contextSettings = ['actor_id', 'team_id', 'source', 'source_ref', 'api_key_id']
/**
 * The select that sets the context for the current transaction, its values numbered from `$first`.
 * It also tells the change feed's trigger that the app announces the transaction's events once it
 * has committed (`onAuditedCommit`), rather than a notification inside it, which would make
 * concurrent commits wait for each other's WAL flush (a migration says more).
 */
const setContextSql = (first: number) =>
  `select ${contextSettings.map((name, i) => `set_config('app.${name}', $${first + i}, true)`).join(', ')}, set_config('app.notify_after_commit', 'on', true)`

let afterCommit: () => void = () => {}

/** What runs after every committed write of an audited client: the app announces its change events there. */
export function onAuditedCommit(announce: () => void): void {
  afterCommit = announce
}

/** `result`, once it has resolved: the write committed, so its events are announced. */
async function announced<T>(result: Promise<T>): Promise<T> {
  const value = await result
  afterCommit()
  return value
}

/** The parameters of an audit context, in the order `setContextSql` numbers them. */
export const auditContextValues = (context: AuditContext) =>
  [context.actorId ?? '', context.teamId ?? '', context.source, context.sourceRef ?? '', context.apiKeyId ?? '']

/**
 * The audited texts made so far, by the write's parameter count and text: a write whose text is
 * built once (records.ts keeps its INSERTs) is then the same string on every request too.
 */
const auditedTexts = new Map<number, Map<string, string>>()
const maxAuditedTexts = 1000

/**
 * A write of `paramCount` parameters made one statement with its audit context: `text` starts with
 * `with` and selects from `audit_context`, which this puts first; its values follow the write's.
 */
export function auditedWriteSql(text: string, paramCount: number): string {
  let texts = auditedTexts.get(paramCount)
  if (!texts) auditedTexts.set(paramCount, texts = new Map())
  let audited = texts.get(text)
  if (audited === undefined) {
    if (!/^with\s/i.test(text) || !text.includes('audit_context')) throw new Error('An audited write is a WITH statement that selects from audit_context')
    audited = `with audit_context as materialized (${setContextSql(paramCount + 1)}), ${text.replace(/^with\s+/i, '')}`
    if (texts.size < maxAuditedTexts) texts.set(text, audited)
  }
  return audited
}

/** The team the client is bound to; services read it from here, so a handler cannot point them at another team. */
export function requireTeam(client: AuditedClient): string {
  const teamId = client.context.teamId
  if (!teamId) throw createError({ statusCode: 500, statusMessage: 'The client is not bound to a team' })
  return teamId
}

/** The actor the client writes for. */
export function requireActor(client: AuditedClient): string {
  const actorId = client.context.actorId
  if (!actorId) throw createError({ statusCode: 500, statusMessage: 'The client is not bound to an actor' })
  return actorId
}

/** Binds the database to an actor, team and source; the activity-log trigger reads them inside each transaction. */
export function createAuditedClient(db: Database, context: AuditContext): AuditedClient {
  const values = auditContextValues(context)
  const transaction = <T>(fn: (tx: Queryable) => Promise<T>) => announced(db.transaction(async (tx) => {
    await tx.query(setContextSql(1), values, { prepare: true })
    return fn(tx)
  }))
  return {
    context,
    transaction,
    query: (text, params) => transaction(tx => tx.query(text, params)),
    write: (text, params = [], options) => announced(db.query(auditedWriteSql(text, params.length), [...params, ...values], { ...options, prepare: true })),
    // the app builds every statement of these two from the registry, so their texts are few: prepared
    read: (text, params, options) => db.query(text, params, { ...options, prepare: true }),
  }
}
