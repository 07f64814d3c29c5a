// Running writes: a request read by request.ts and planned by plan.ts, written through the records
// service (which validates each record and keeps the team filter in every statement).
import type { DataRecord } from '#shared/types/data'
import { requireTeam, type AuditedClient } from '../db/audited-client'
import type { Queryable } from '../db/db-drivers'
import { createRecords, deleteRecords, inWriteTransaction, updateRecords, upsertRecords } from '../records/records'
import { quoteIdent, type TableInfo } from '../records/table-registry'
import { apiError, readErrors } from './errors'
import type { Plan } from './plan'
import type { Preferences } from './preferences'
import type { FilterNode, SelectItem } from './query'
import { representRecords } from './read'
import { maxFilteredWrite, type ApiRequest } from './request'
import { filterSql } from './sql'

/** `return=representation`: the written rows as `select` asks, read in the write's own transaction. */
function representation(table: TableInfo, teamId: string, select: SelectItem[] | null) {
  return (tx: Pick<Queryable, 'query'>, rows: DataRecord[]) =>
    select ? representRecords(tx, table, teamId, rows.map(row => row.id as string), select) : Promise.resolve(rows)
}

/** POST of 1 to 100 records (or upserts by id) in one transaction, all or none; `tx=rollback` writes nothing. */
export async function createRows(client: AuditedClient, request: ApiRequest, plan: Extract<Plan, { kind: 'create' }>): Promise<DataRecord[]> {
  const { table, records } = request
  const options = { dryRun: plan.dryRun, represent: representation(table, requireTeam(client), request.select) }
  return plan.upsert
    ? upsertRecords(client, table, records, { ...options, ignoreDuplicates: plan.ignoreDuplicates })
    : createRecords(client, table, records, options)
}

/**
 * Locks the team's rows matching the filters (at most the bound plus one) and refuses, before
 * anything changes, more than `maxFilteredWrite` of them or more than `max-affected` under `handling=strict`.
 */
async function lockMatching(tx: Queryable, table: TableInfo, teamId: string, filters: FilterNode[], preferences: Preferences): Promise<string[]> {
  const params: unknown[] = [teamId]
  const where = ['r.team_id = $1', ...filterSql(filters, params)]
  params.push(maxFilteredWrite + 1)
  const { rows } = await readErrors(() => tx.query<{ id: string }>(
    `select r.id from public.${quoteIdent(table.name)} r where ${where.join(' and ')} order by r.id limit $${params.length} for update of r`, params))
  if (rows.length > maxFilteredWrite) {
    throw apiError(400, `More than ${maxFilteredWrite} ${table.name} records match; nothing was changed`, {
      code: 'PGRST124', hint: `Narrow the filters: one request changes at most ${maxFilteredWrite} rows`,
    })
  }
  if (preferences.handling === 'strict' && preferences.maxAffected !== undefined && rows.length > preferences.maxAffected) {
    throw apiError(400, `Query result exceeds max-affected preference constraint: ${rows.length} rows match, max-affected is ${preferences.maxAffected}; nothing was changed`, { code: 'PGRST124' })
  }
  return rows.map(row => row.id)
}

/** PATCH or DELETE with filters in one transaction: the changed records as `select` asks when represented, else their ids. */
export async function writeFiltered(client: AuditedClient, request: ApiRequest, plan: Extract<Plan, { kind: 'update' | 'delete' }>): Promise<DataRecord[]> {
  const { table, select, order } = request
  const teamId = requireTeam(client)
  return inWriteTransaction(client, plan.dryRun, async (tx) => {
    const ids = await lockMatching(tx, table, teamId, request.filters, request.preferences)
    // a deleted row is read before it goes
    const before = plan.represent && plan.kind === 'delete' ? await representRecords(tx, table, teamId, ids, select, order) : null
    const written = plan.kind === 'update' ? await updateRecords(tx, table, teamId, ids, request.changes) : await deleteRecords(tx, table, teamId, ids)
    return before ?? (plan.represent ? representRecords(tx, table, teamId, written, select, order) : written.map(id => ({ id })))
  })
}
