// The records service: read, create, upsert, change and delete a team's records, one by one or
// several in one transaction (the input in record-input.ts, the SQL in record-sql.ts, the reference
// checks in record-references.ts, database errors in words in database-errors.ts).
import { z } from 'zod'
import { requireActor, requireTeam, type AuditedClient } from '../db/audited-client'
import type { Queryable } from '../db/db-drivers'
import { quoteIdent, type TableInfo } from './table-registry'
import { forElement, parseRecordInput, recordSchemas, writableColumns } from './record-input'
import { checkReferences, referenceConditions, refusedReferences } from './record-references'
import { insertStatement, parameter, selectSql, tableSql } from './record-sql'
import { withDatabaseErrors } from './database-errors'
import type { DataRecord } from '#shared/types/data'

/** The 404 of a record id the team has none of (a malformed id too: no record can have it). */
export const recordNotFound = (table: Pick<TableInfo, 'name'>) => createError({ statusCode: 404, statusMessage: `No ${table.name} record with this id in the team` })
const notFound = recordNotFound

/** A check of a record's current state before it is written (If-Match); it throws to refuse. */
export type RecordGuard = (current: DataRecord) => void

/**
 * Locks the record for the rest of the transaction and runs the guard on it, so a concurrent
 * writer waits and then sees the new version: the check and the write cannot be split.
 */
async function lockAndGuard(tx: Queryable, table: TableInfo, id: string, teamId: string, guard: RecordGuard) {
  const { rows } = await tx.query<DataRecord>(`${await selectSql(table, tableSql(table))} where r.id = $1 and r.team_id = $2 for update of r`, [id, teamId])
  if (!rows[0]) throw notFound(table)
  guard(rows[0])
}

/** One record of the team; 404 when the id is not in the client's team. */
export async function getRecord(client: AuditedClient, table: TableInfo, id: string): Promise<DataRecord> {
  const teamId = requireTeam(client)
  if (!z.uuid().safeParse(id).success) throw notFound(table)
  const { rows } = await client.read<DataRecord>(`${await selectSql(table, tableSql(table))} where r.id = $1 and r.team_id = $2`, [id, teamId])
  if (!rows[0]) throw notFound(table)
  return rows[0]
}

/**
 * Creates a record: team_id from the client's team, created_by from its actor; 400 naming the field
 * for bad input. One statement sets the audit context, checks the foreign keys and inserts; only
 * when it inserts nothing do the separate checks run, to name the field at fault.
 */
export async function createRecord(client: AuditedClient, table: TableInfo, input: unknown): Promise<DataRecord> {
  const teamId = requireTeam(client)
  const values = parseRecordInput(table, recordSchemas(table).create, input)
  const statement = await insertStatement(table, teamId, requireActor(client), values, true)
  // the created record is answered as JSON: its timestamps are read as the ISO text JSON prints
  const { rows } = await withDatabaseErrors(table, () => client.write<DataRecord>(statement.sql, statement.params, { isoTimestamps: true }))
  return rows[0] ?? refusedReferences({ query: client.read }, table, teamId, values)
}

/** The most records one request may create. */
export const maxBulkRecords = 100

/** How a write in a transaction answers and ends: `represent` reshapes its rows inside it; `dryRun` rolls it back. */
export interface WriteOptions {
  dryRun?: boolean
  represent?: (tx: Queryable, rows: DataRecord[]) => Promise<DataRecord[]>
}

/** Carries a dry run's answer out of the transaction it rolls back. */
class RolledBack<T> extends Error {
  constructor(readonly result: T) {
    super('rolled back')
  }
}

/** Runs `fn` in one audited transaction; with `dryRun` it is rolled back after `fn` answered (`Prefer: tx=rollback`). */
export async function inWriteTransaction<T>(client: AuditedClient, dryRun: boolean, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await client.transaction(async (tx) => {
      const result = await fn(tx)
      if (dryRun) throw new RolledBack(result)
      return result
    })
  }
  catch (error) {
    if (error instanceof RolledBack) return error.result as T
    throw error
  }
}

/**
 * Creates several records in one transaction, all or none, answered in the order given; a 4xx
 * names the element (`[3].title: is required`).
 */
export async function createRecords(client: AuditedClient, table: TableInfo, inputs: unknown[], options: WriteOptions = {}): Promise<DataRecord[]> {
  const teamId = requireTeam(client)
  const actorId = requireActor(client)
  const values = inputs.map((input, i) => forElement(i, () => parseRecordInput(table, recordSchemas(table).create, input)))
  const statements = await Promise.all(values.map(value => insertStatement(table, teamId, actorId, value)))
  return inWriteTransaction(client, options.dryRun ?? false, async (tx) => {
    const rows: DataRecord[] = []
    for (const [i, statement] of statements.entries()) {
      rows.push(await forElement(i, () => withDatabaseErrors(table, async () => {
        // one statement an element: it inserts only when every foreign key points inside the team
        const { rows } = await tx.query<DataRecord>(statement.sql, statement.params)
        return rows[0] ?? refusedReferences(tx, table, teamId, values[i]!)
      })))
    }
    return options.represent ? options.represent(tx, rows) : rows
  })
}

/**
 * Inserts records or, for an `id` the team already has, changes it (`ignoreDuplicates`: leaves it
 * as it is), in one transaction, all or none. An id of another team's record is a 409 that says
 * only that the id is taken: that record is neither changed, nor shown, nor locked.
 */
export async function upsertRecords(client: AuditedClient, table: TableInfo, inputs: unknown[], options: WriteOptions & { ignoreDuplicates: boolean }): Promise<DataRecord[]> {
  const teamId = requireTeam(client)
  const actorId = requireActor(client)
  const schema = recordSchemas(table).create.extend({ id: z.uuid().optional() })
  const values = inputs.map((input, i) => forElement(i, () => parseRecordInput(table, schema, input)))
  const ids = values.map(value => value.id as string | undefined)
  const repeated = ids.findIndex((id, i) => id !== undefined && ids.indexOf(id) !== i)
  if (repeated >= 0) throw createError({ statusCode: 400, statusMessage: `[${repeated}].id: appears twice in the request`, data: { code: '21000' } })
  const given = ids.filter((id): id is string => id !== undefined)
  if (given.length) {
    // a plain read, so another team's row is not locked; the upsert below also changes only the team's own rows
    const { rows } = await client.read<{ id: string }>(`select id from ${tableSql(table)} where id = any($1::uuid[]) and team_id <> $2`, [given, teamId])
    if (rows[0]) throw createError({ statusCode: 409, statusMessage: `id: ${rows[0].id} is taken`, data: { code: '23505' } })
  }
  const conflict = options.ignoreDuplicates ? 'nothing' : 'update'
  const statements = await Promise.all(values.map(({ id, ...value }) =>
    insertStatement(table, teamId, actorId, value, false, undefined, id === undefined ? undefined : { id: id as string, action: conflict })))
  return inWriteTransaction(client, options.dryRun ?? false, async (tx) => {
    const rows: DataRecord[] = []
    for (const [i, statement] of statements.entries()) {
      const row = await forElement(i, () => withDatabaseErrors(table, async () => {
        const { rows } = await tx.query<DataRecord>(statement.sql, statement.params)
        if (rows[0]) return rows[0]
        // nothing written: a reference outside the team (400), else a duplicate left as it is
        await checkReferences(tx, table, teamId, values[i]!)
        if (conflict === 'update') throw createError({ statusCode: 409, statusMessage: 'A record this one refers to changed while it was written; try again' })
        return null
      }))
      if (row) rows.push(row)
    }
    return options.represent ? options.represent(tx, rows) : rows
  })
}

/** Changes the given columns of a team's record; 404 when the id is not in the team. */
export async function updateRecord(client: AuditedClient, table: TableInfo, id: string, input: unknown, guard?: RecordGuard): Promise<DataRecord> {
  const teamId = requireTeam(client)
  if (!z.uuid().safeParse(id).success) throw notFound(table)
  const values = parseRecordInput(table, recordSchemas(table).update, input)
  const columns = writableColumns(table).filter(column => values[column.name] !== undefined)
  if (!columns.length) throw createError({ statusCode: 400, statusMessage: 'Name at least one column to change' })
  const params = [id, teamId, ...columns.map(c => parameter(c, values[c.name]))]
  const assignments = columns.map((column, i) => `${quoteIdent(column.name)} = $${i + 3}`)
  // one statement checks the references and updates; when it writes nothing, the separate checks say why
  const target = tableSql(table)
  const references = await referenceConditions(columns, values, '$2')
  const where = [`${target}.id = $1`, `${target}.team_id = $2`, ...references]
  // the database skips an update that changes nothing (trigger skip_unchanged_update): the record
  // already holding every value asked for is the answer, as it is (same updated_at, same ETag)
  const holdsValues = columns.map((column, i) => `to_jsonb(${target}.${quoteIdent(column.name)}) is not distinct from to_jsonb($${i + 3}::${column.type})`)
  const unchanged = `select ${target}.* from ${target} where ${[...where, ...holdsValues].join(' and ')} and not exists (select from updated)`
  const select = await selectSql(table, '(select * from updated union all select * from unchanged)')
  const update = (audited: boolean) =>
    `with updated as (update ${target} set ${assignments.join(', ')}${audited ? ' from audit_context' : ''} where ${where.join(' and ')} returning ${target}.*), unchanged as (${unchanged}) ${select}`
  if (guard) {
    // the guard reads the locked row first, so this one takes a transaction
    return withDatabaseErrors(table, () => client.transaction(async (tx) => {
      await lockAndGuard(tx, table, id, teamId, guard)
      const { rows } = await tx.query<DataRecord>(update(false), params)
      return rows[0] ?? refusedReferences(tx, table, teamId, values)
    }))
  }
  const { rows } = await withDatabaseErrors(table, () => client.write<DataRecord>(update(true), params))
  if (rows[0]) return rows[0]
  await getRecord(client, table, id)
  return refusedReferences({ query: client.read }, table, teamId, values)
}

/** Deletes a team's record; 404 when the id is not in the team. One statement unless a guard must read it first. */
export async function deleteRecord(client: AuditedClient, table: TableInfo, id: string, guard?: RecordGuard): Promise<void> {
  const teamId = requireTeam(client)
  if (!z.uuid().safeParse(id).success) throw notFound(table)
  const target = tableSql(table)
  const { rows } = await withDatabaseErrors(table, () => guard
    ? client.transaction(async (tx) => {
        await lockAndGuard(tx, table, id, teamId, guard)
        return tx.query(`delete from ${target} where id = $1 and team_id = $2 returning id`, [id, teamId])
      })
    : client.write(`with deleted as (delete from ${target} using audit_context where ${target}.id = $1 and ${target}.team_id = $2 returning ${target}.id) select id from deleted`, [id, teamId]))
  if (!rows.length) throw notFound(table)
}

/**
 * Changes the given columns of the team's records with these ids (locked by the caller), in its
 * transaction; answers the ids changed. A reference outside the team is a 400 naming the field.
 */
export async function updateRecords(tx: Queryable, table: TableInfo, teamId: string, ids: string[], input: unknown): Promise<string[]> {
  const values = parseRecordInput(table, recordSchemas(table).update, input)
  const columns = writableColumns(table).filter(column => values[column.name] !== undefined)
  if (!columns.length) throw createError({ statusCode: 400, statusMessage: 'Name at least one column to change' })
  if (!ids.length) return []
  const params = [ids, teamId, ...columns.map(c => parameter(c, values[c.name]))]
  const assignments = columns.map((column, i) => `${quoteIdent(column.name)} = $${i + 3}`)
  const target = tableSql(table)
  const where = [`${target}.id = any($1::uuid[])`, `${target}.team_id = $2`, ...await referenceConditions(columns, values, '$2')]
  const { rows } = await withDatabaseErrors(table, () => tx.query<{ id: string }>(`update ${target} set ${assignments.join(', ')} where ${where.join(' and ')} returning ${target}.id`, params))
  if (rows.length < ids.length) await refusedReferences(tx, table, teamId, values)
  return rows.map(row => row.id)
}

/** Deletes the team's records with these ids (locked by the caller), in its transaction; answers the ids deleted. */
export async function deleteRecords(tx: Queryable, table: TableInfo, teamId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return []
  const { rows } = await withDatabaseErrors(table, () => tx.query<{ id: string }>(`delete from ${tableSql(table)} where id = any($1::uuid[]) and team_id = $2 returning id`, [ids, teamId]))
  return rows.map(row => row.id)
}
