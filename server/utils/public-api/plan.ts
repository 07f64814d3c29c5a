// Planning: what a request read by request.ts does, decided before anything runs: which write (one
// record's short way, several or an upsert in a transaction, by filters, by id), whether it rolls
// back, when its answer is read, and the If-Match check. Nothing here reads the request or the database.
import type { RecordGuard } from '../records/records'
import { recordEtag } from './answer'
import { apiError } from './errors'
import type { ApiRequest } from './request'

/**
 * - `list`, `one`: read a page or a record (the request's query, its id);
 * - `createOne`: one record without `Prefer` or `select`, answered as the created record with its ETag;
 * - `create`: 1 to 100 records (or upserts) in one transaction, answered as the preferences ask;
 * - `update`, `delete`: the rows matching the filters, locked then changed in one transaction;
 *   `represent`: the answer reads them as `select` asks (a delete before, an update after);
 * - `updateOne`, `deleteOne`: the record of the id, `guard` checking If-Match against it first.
 */
export type Plan
  = | { kind: 'list' | 'one' | 'createOne' }
    | { kind: 'create', upsert: boolean, ignoreDuplicates: boolean, dryRun: boolean }
    | { kind: 'update' | 'delete', dryRun: boolean, represent: boolean }
    | { kind: 'updateOne' | 'deleteOne', guard: RecordGuard | undefined }

// the plans that depend on nothing but the action, made once
const listPlan: Plan = { kind: 'list' }
const onePlan: Plan = { kind: 'one' }
const createOnePlan: Plan = { kind: 'createOne' }
const updateOnePlan: Plan = { kind: 'updateOne', guard: undefined }
const deleteOnePlan: Plan = { kind: 'deleteOne', guard: undefined }

/** The plan of a request; 400 for what the route cannot do (`tx=rollback` on one record). */
export function planRequest(request: ApiRequest): Plan {
  const { action, preferences } = request
  switch (action) {
    case 'list': return listPlan
    case 'one': return onePlan
    case 'create':
      // without preferences or select, one record goes the short way: its answer is the row the insert returns
      if (!preferences.return && !preferences.resolution && !preferences.tx && !request.select && !request.bulk) return createOnePlan
      return { kind: 'create', upsert: Boolean(preferences.resolution), ignoreDuplicates: preferences.resolution === 'ignore-duplicates', dryRun: preferences.tx === 'rollback' }
    case 'update':
    case 'delete':
      return { kind: action, dryRun: preferences.tx === 'rollback', represent: request.format !== null }
    case 'updateOne':
    case 'deleteOne': {
      // refused, never silently committed
      if (preferences.tx === 'rollback') {
        const method = action === 'updateOne' ? 'PATCH' : 'DELETE'
        throw apiError(400, `Prefer: tx=rollback is not supported on ${method} /{table}/{id}; use ${method} /{table}?id=eq.<id>, which supports it`, { code: 'PGRST122' })
      }
      const guard = ifMatchGuard(request.ifMatch)
      if (!guard) return action === 'updateOne' ? updateOnePlan : deleteOnePlan
      return { kind: action, guard }
    }
  }
}

/** The guard of an `If-Match` write: 412 unless the record's current ETag is one named. */
function ifMatchGuard(ifMatch: string | undefined): RecordGuard | undefined {
  if (!ifMatch || ifMatch.trim() === '*') return undefined
  const tags = ifMatch.split(',').map(tag => tag.trim().replace(/^W\//, ''))
  return (current) => {
    if (!tags.includes(recordEtag(current))) {
      throw createError({ statusCode: 412, statusMessage: 'The record changed since you read it (If-Match does not match); read it again' })
    }
  }
}
