import { z } from 'zod'
import { requireActor, requireTeam, type AuditedClient } from '../db/audited-client'
import type { Queryable } from '../db/db-drivers'
import { quoteIdent, systemColumns, type ColumnInfo, type TableInfo, useTableRegistry } from './table-registry'
import { columnValueType } from './column-types'
import { problemCodes, ruleInWords, singleCheckInWords, typeInWords } from './column-rules'
import { rejectUnstorable, validationError } from '../validation'
import type { DataRecord } from '#shared/types/data'

type Schemas = { create: z.ZodObject, update: z.ZodObject }

const isSystemColumn = (name: string) => (systemColumns as readonly string[]).includes(name)

/** The columns a request may set: every column but the system ones and generated ones. */
export function writableColumns(table: TableInfo): ColumnInfo[] {
  return table.columns.filter(column => !isSystemColumn(column.name))
}

function describe(column: ColumnInfo, schema: z.ZodType): z.ZodType {
  const hints = [column.comment, column.references && `references ${column.references.table}.${column.references.column}`]
  const description = hints.filter(Boolean).join('; ')
  return description ? schema.describe(description) : schema
}

/** `field: is a system column…` / `field: is not a column of <table>` for the first unknown key. */
function unknownKeyError(table: TableInfo) {
  return (issue: z.core.$ZodRawIssue) => {
    if (issue.code !== 'unrecognized_keys') return undefined
    const key = (issue as unknown as { keys: string[] }).keys[0]!
    return isSystemColumn(key)
      ? `${key}: is a system column and cannot be set`
      : `${key}: is not a column of ${table.name}`
  }
}

const schemaCache = new WeakMap<TableInfo, Schemas>()

/**
 * The zod schemas of a domain table's input, built from the catalog. Strict: an unknown or system
 * field is an error naming the field. `create` requires the not-null columns without a default.
 */
export function recordSchemas(table: TableInfo): Schemas {
  const cached = schemaCache.get(table)
  if (cached) return cached
  const create: Record<string, z.ZodType> = {}
  const update: Record<string, z.ZodType> = {}
  for (const column of writableColumns(table)) {
    const value = column.nullable ? columnValueType(column).zod.nullable() : columnValueType(column).zod
    const isRequired = !column.nullable && !column.hasDefault
    create[column.name] = describe(column, isRequired ? value : value.optional())
    update[column.name] = describe(column, value.optional())
  }
  const error = unknownKeyError(table)
  const schemas = { create: z.strictObject(create, { error }), update: z.strictObject(update, { error }) }
  schemaCache.set(table, schemas)
  return schemas
}

/**
 * Parses input with a zod schema; a 400 names the first invalid field, says the column's rule in
 * words, and carries the code of that problem (the same code a filter on the column would get).
 */
function parseRecordInput(table: TableInfo, schema: z.ZodObject, input: unknown): DataRecord {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw createError({ statusCode: 400, statusMessage: 'The record must be a JSON object' })
  }
  rejectUnstorable(input)
  const result = schema.safeParse(input)
  if (result.success) return result.data as DataRecord
  throw recordInputError(table, result.error.issues, input as Record<string, unknown>)
}

/** The 400 of the first invalid field of a record's input. */
function recordInputError(table: TableInfo, issues: readonly z.core.$ZodIssue[], input: Record<string, unknown>) {
  const issue = issues[0]
  const name = issue?.path[0]
  const column = typeof name === 'string' ? table.columns.find(c => c.name === name) : undefined
  if (!issue || !column) {
    const unknown = issue?.code === 'unrecognized_keys' && !isSystemColumn(issue.keys[0] ?? '')
    return createError({ statusCode: 400, statusMessage: validationError(issues).statusMessage, data: unknown ? { code: problemCodes.unknownColumn } : undefined })
  }
  const problem = (message: string, code: string) => createError({ statusCode: 400, statusMessage: `${column.name}: ${message}`, data: { code } })
  const value = input[column.name]
  if (value === undefined || value === null) return problem('is required', problemCodes.required)
  if (issue.code === 'too_big' || issue.code === 'too_small') {
    const rule = ruleInWords(table, column)
    if (rule !== typeInWords(column)) return problem(rule, problemCodes.outsideRule)
    const bound = issue.code === 'too_big' ? `at most ${issue.maximum}` : `at least ${issue.minimum}`
    return problem(`${rule} ${bound}`, column.type.startsWith('character') ? problemCodes.outsideRule : problemCodes.outOfRange)
  }
  return problem(typeInWords(column), problemCodes.wrongType)
}

/** The foreign keys whose target has a `name` (else `title`), and the alias each joins in (`project_id` -> `project_name`). */
export function joinedNames(table: TableInfo, registry: Map<string, TableInfo>) {
  const joins: { column: string, target: string, targetColumn: string, nameColumn: string, alias: string, sameTeam: boolean }[] = []
  for (const column of table.columns) {
    if (!column.references) continue
    const target = registry.get(column.references.table)
    const nameColumn = ['name', 'title'].find(name => target?.columns.some(c => c.name === name))
    if (!target || !nameColumn) continue
    const alias = `${column.name.replace(/_id$/, '')}_name`
    if (table.columns.some(c => c.name === alias)) continue
    const sameTeam = target.columns.some(c => c.name === 'team_id')
    joins.push({ column: column.name, target: target.name, targetColumn: column.references.column, nameColumn, alias, sameTeam })
  }
  return joins
}

/**
 * `select <columns>, <joined names> from %SOURCE% r left join …`: the shape of every record answer,
 * reading rows of %SOURCE% (the table, or a CTE of inserted/updated rows).
 */
export function recordSelectTemplate(table: TableInfo, registry: Map<string, TableInfo>): string {
  const joins = joinedNames(table, registry)
  const columns = table.columns.map(c => `r.${quoteIdent(c.name)}`)
  const names = joins.map((join, i) => `j${i}.${quoteIdent(join.nameColumn)} as ${quoteIdent(join.alias)}`)
  const from = joins.map((join, i) =>
    `left join public.${quoteIdent(join.target)} j${i} on j${i}.${quoteIdent(join.targetColumn)} = r.${quoteIdent(join.column)}`
    + (join.sameTeam ? ` and j${i}.team_id = r.team_id` : ''))
  return `select ${[...columns, ...names].join(', ')} from %SOURCE% r ${from.join(' ')}`
}

/** The list query of GET /api/v1/{table}: $1 team, $2 limit, $3 offset. */
export function listRecordsSql(table: TableInfo, registry: Map<string, TableInfo>): string {
  return `${recordSelectTemplate(table, registry).replace('%SOURCE%', `public.${quoteIdent(table.name)}`)}
    where r.team_id = $1 order by r.created_at desc, r.id desc limit $2 offset $3`
}

const selectCache = new WeakMap<TableInfo, string>()

/** `recordSelectTemplate`, built once per table. */
export async function cachedSelectTemplate(table: TableInfo, registry?: Map<string, TableInfo>): Promise<string> {
  let template = selectCache.get(table)
  if (!template) {
    template = recordSelectTemplate(table, registry ?? await useTableRegistry())
    selectCache.set(table, template)
  }
  return template
}

async function selectSql(table: TableInfo, source: string, registry?: Map<string, TableInfo>): Promise<string> {
  return (await cachedSelectTemplate(table, registry)).replace('%SOURCE%', source)
}

const tableSql = (table: TableInfo) => `public.${quoteIdent(table.name)}`

const notFound = (table: TableInfo) => createError({ statusCode: 404, statusMessage: `No ${table.name} record with this id in the team` })

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

/** A value as a query parameter: json columns are sent as JSON text. */
function parameter(column: ColumnInfo, value: unknown): unknown {
  return (column.type === 'json' || column.type === 'jsonb') && value !== null ? JSON.stringify(value) : value
}

/**
 * The condition that a foreign-key value points at a row the team may use: a row of the same team
 * for a domain table, a member of the team for profiles, the team itself for teams; null for a
 * reference outside the team model, which the foreign key itself decides. `$value` and `$team` are
 * the placeholders of the value and the team id.
 */
function referenceCondition(column: ColumnInfo, registry: Map<string, TableInfo>, value: string, team: string): string | null {
  const references = column.references
  if (!references) return null
  const target = registry.get(references.table)
  // no casts on the value: its type comes from the column it is compared with (and, in an insert, written to)
  if (references.table === 'teams') return `${value} = ${team}::uuid`
  if (references.table === 'profiles') return `exists (select 1 from public.team_members where user_id = ${value} and team_id = ${team})`
  if (target?.columns.some(c => c.name === 'team_id')) {
    return `exists (select 1 from public.${quoteIdent(target.name)} where ${quoteIdent(references.column)} = ${value} and team_id = ${team})`
  }
  return null
}

/** The reference conditions of the written columns, whose values are the parameters from $3 on and the team $1 or $2. */
async function referenceConditions(columns: ColumnInfo[], values: DataRecord, team: string, registry?: Map<string, TableInfo>): Promise<string[]> {
  const tables = registry ?? await useTableRegistry()
  return columns
    .map((column, i) => values[column.name] === null ? null : referenceCondition(column, tables, `$${i + 3}`, team))
    .filter((condition): condition is string => condition !== null)
}

/** Checks each foreign-key value with its own statement; 400 naming the first field that points outside the team. */
async function checkReferences(db: Pick<Queryable, 'query'>, table: TableInfo, teamId: string, values: DataRecord) {
  const registry = await useTableRegistry()
  for (const column of table.columns) {
    if (values[column.name] === undefined || values[column.name] === null) continue
    const condition = referenceCondition(column, registry, '$1', '$2')
    if (!condition) continue
    const { rows } = await db.query<{ ok: boolean }>(`select ${condition} as ok`, [values[column.name], teamId])
    if (!rows[0]?.ok) {
      const what = column.references!.table === 'profiles' ? 'member of this team' : `${column.references!.table} record in this team`
      throw createError({ statusCode: 400, statusMessage: `${column.name}: no ${what} has this id` })
    }
  }
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

/**
 * Why a write that checks its references in its own statement wrote nothing: the 400 naming the
 * first field that points outside the team, else a 409 (a record it refers to changed meanwhile).
 */
async function refusedReferences(db: Pick<Queryable, 'query'>, table: TableInfo, teamId: string, values: DataRecord): Promise<never> {
  await checkReferences(db, table, teamId, values)
  throw createError({ statusCode: 409, statusMessage: 'A record this one refers to changed while it was written; try again' })
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

/** Runs `fn` for the element `index` of a list; a 4xx it throws is prefixed with `[index]`. */
function forElement<T>(index: number, fn: () => T): T {
  const prefixed = (error: unknown) => {
    if (!isError(error) || error.statusCode >= 500) return error
    const message = error.statusMessage || error.message
    return createError({ statusCode: error.statusCode, statusMessage: /^[\w.]+: /.test(message) ? `[${index}].${message}` : `[${index}]: ${message}`, data: error.data })
  }
  try {
    const result = fn()
    if (!(result instanceof Promise)) return result
    return result.catch((error: unknown) => Promise.reject(prefixed(error))) as T
  }
  catch (error) {
    throw prefixed(error)
  }
}

/**
 * The INSERT texts built so far, per table (of one registry) and record shape. A text built once is
 * the same string on every request: the prepared statement's look-up by its text, and the driver's
 * check of that text, then compare one string with itself instead of reading 1 or 2 KB each time.
 */
const insertTexts = new WeakMap<TableInfo, Map<string, string>>()
const maxInsertTexts = 200

/**
 * The INSERT of one record for the team and actor, answering it with its joined names. It inserts
 * only when every foreign key points inside the team (else nothing, and no row comes back).
 * `audited`: for `client.write`, selecting from its audit_context; otherwise for a transaction that
 * set the context itself. `registry`: the tables, when not the app's own (the benchmark runs this
 * statement bare).
 */
export async function insertStatement(table: TableInfo, teamId: string, actorId: string, values: DataRecord, audited = false, registry?: Map<string, TableInfo>, upsert?: { id: string, action: 'update' | 'nothing' }): Promise<{ sql: string, params: unknown[] }> {
  const columns = writableColumns(table).filter(column => values[column.name] !== undefined)
  // an upsert's id goes last, so that the columns' values keep the numbers referenceConditions gives them
  const params = [teamId, actorId, ...columns.map(c => parameter(c, values[c.name])), ...(upsert ? [upsert.id] : [])]
  // the text depends only on the record's shape: which columns it gives, which of them are null
  const shape = `${audited ? 'audited' : ''}|${upsert?.action ?? ''}|${columns.map(c => values[c.name] === null ? `${c.name}=null` : c.name).join(',')}`
  let texts = insertTexts.get(table)
  if (!texts) insertTexts.set(table, texts = new Map())
  let sql = texts.get(shape)
  if (sql === undefined) {
    sql = await insertSql(table, columns, values, audited, registry, upsert?.action)
    if (texts.size < maxInsertTexts) texts.set(shape, sql)
  }
  return { sql, params }
}

async function insertSql(table: TableInfo, columns: ColumnInfo[], values: DataRecord, audited: boolean, registry: Map<string, TableInfo> | undefined, upsert: 'update' | 'nothing' | undefined): Promise<string> {
  const names = ['team_id', 'created_by', ...columns.map(c => c.name), ...(upsert ? ['id'] : [])].map(quoteIdent)
  const placeholders = names.map((_, i) => `$${i + 1}`).join(', ')
  const conditions = await referenceConditions(columns, values, '$1', registry)
  const where = conditions.length ? ` where ${conditions.join(' and ')}` : ''
  const source = audited ? `select ${placeholders} from audit_context${where}` : where || upsert ? `select ${placeholders}${where}` : `values (${placeholders})`
  // only the team's own row is ever changed: another team's id was refused before, and the where re-checks it
  const assignments = columns.map(c => `${quoteIdent(c.name)} = excluded.${quoteIdent(c.name)}`)
  const onConflict = !upsert
    ? ''
    : upsert === 'update' && assignments.length
      ? ` on conflict (id) do update set ${assignments.join(', ')} where ${tableSql(table)}.team_id = $1`
      : ' on conflict (id) do nothing'
  const insert = `with inserted as (insert into ${tableSql(table)} (${names.join(', ')}) ${source}${onConflict} returning *)`
  return `${insert} ${await selectSql(table, 'inserted', registry)}`
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

interface DatabaseError {
  code?: string
  constraint?: string
  column?: string
  detail?: string
  message?: string
}

/**
 * A CHECK over several columns in words: the first clause of a column comment that names another
 * of its columns (`a done task must have completed_at`), else its condition in plain terms.
 */
function checkInWords(table: TableInfo, check: TableInfo['checks'][number]): string {
  const clause = check.columns
    .flatMap(name => (table.columns.find(c => c.name === name)?.comment ?? '').split(/[;.]\s*/)
      .filter(part => check.columns.some(other => other !== name && part.includes(other))))[0]
  const rule = clause?.trim() || `must satisfy ${check.definition.replace(/^CHECK \((.*)\)$/s, '$1')
    .replace(/::[a-z ]+(\[\])?/gi, '').replace(/<>/g, 'is not').replace(/\bOR\b/g, 'or').replace(/\bAND\b/g, 'and').replace(/[()]/g, '')}`
  return `${rule} (violates ${check.name})`
}

const valueErrors = new Set(['22P02', '22003', '22007', '22008', '22001', '22023'])

/** A database error as a 400 with a message a person or a model can act on; anything else is rethrown. */
export function databaseErrorMessage(table: TableInfo, error: unknown): string | null {
  const { code, constraint, column, detail, message } = (error ?? {}) as DatabaseError
  if (code === '23514') {
    const check = table.checks.find(c => c.name === constraint)
    if (!check) return `violates ${constraint ?? 'a check constraint'}`
    return singleCheckInWords(table, check) ?? `${check.columns.join(', ')}: ${checkInWords(table, check)}`
  }
  if (code === '23502') return `${column ?? 'a column'}: is required`
  if (code === '23503') {
    const field = /^Key \(([^)]+)\)/.exec(detail ?? '')?.[1] ?? constraint ?? 'a foreign key'
    return `${field}: references a record that does not exist (${constraint ?? 'foreign key'})`
  }
  if (code === '23505') return `violates the unique constraint ${constraint ?? ''}`.trim()
  if (code && valueErrors.has(code)) return `Invalid value: ${message ?? 'out of range'}`
  return null
}

async function withDatabaseErrors<T>(table: TableInfo, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  }
  catch (error) {
    const message = databaseErrorMessage(table, error)
    if (message === null) throw error
    const { code } = error as DatabaseError
    throw createError({ statusCode: code === '23505' ? 409 : 400, statusMessage: message, data: { code } })
  }
}
