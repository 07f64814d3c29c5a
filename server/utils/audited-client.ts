import type { ActivitySource } from '#shared/utils/schemas'
import type { Database, Queryable, QueryResult } from './db-drivers'

export interface AuditContext {
  actorId: string | null
  teamId: string | null
  source: ActivitySource
  /** The chat id for chat writes. */
  sourceRef?: string | null
  /** The API key of a public API write. */
  apiKeyId?: string | null
}

/** The database bound to an audit context; it runs with elevated privilege, so every query filters by team itself. */
export interface AuditedClient {
  readonly context: AuditContext
  /** One statement in its own transaction, with the audit context set. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<T>>
  /** Several statements in one transaction, with the audit context set. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /** A read that writes nothing, so it needs no audit context (no transaction round trips). */
  read<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<T>>
}

const setContextSql = `select
  set_config('app.actor_id', $1, true),
  set_config('app.team_id', $2, true),
  set_config('app.source', $3, true),
  set_config('app.source_ref', $4, true),
  set_config('app.api_key_id', $5, true)`

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
  const transaction = <T>(fn: (tx: Queryable) => Promise<T>) => db.transaction(async (tx) => {
    await tx.query(setContextSql, [context.actorId ?? '', context.teamId ?? '', context.source, context.sourceRef ?? '', context.apiKeyId ?? ''])
    return fn(tx)
  })
  return {
    context,
    transaction,
    query: (text, params) => transaction(tx => tx.query(text, params)),
    read: (text, params) => db.query(text, params),
  }
}
