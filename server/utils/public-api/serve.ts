// A table request from top to bottom: read it (request.ts), plan it (plan.ts), run it (read.ts,
// write.ts and the records service) and answer it (answer.ts). A key's writes run at most once per
// Idempotency-Key (records/idempotency.ts), their answer stored for a replay.
import type { H3Event } from 'h3'
import type { AuditedClient } from '../db/audited-client'
import { idempotent } from '../records/idempotency'
import { createRecord, deleteRecord, getRecord, updateRecord } from '../records/records'
import type { TableInfo } from '../records/table-registry'
import {
  answerCreated, answerCreatedRecord, answerDeleted, answerFilteredWrite, answerList, answerRecord, answerUpdatedRecord,
} from './answer'
import { planRequest, type Plan } from './plan'
import type { QueryAccess } from './query'
import { queryRecords } from './read'
import { readApiRequest, type ApiRequest, type TableAction } from './request'
import { authApiTable, keyAccess } from './routes'
import { createRows, writeFiltered } from './write'

/** A public API request on the table of its path: the key authenticated and allowed the action (read or write), then answered. */
export async function answerApiRequest(event: H3Event, action: TableAction) {
  const { client, table, apiKey } = await authApiTable(event, action === 'list' || action === 'one' ? 'read' : 'write')
  const request = await readApiRequest(event, action, table, keyAccess(apiKey), apiKey.id)
  return planAndRun(event, client, request, apiKey.id)
}

/** A request on `table` for a caller already authenticated otherwise (the app's own pages: `client` their audited client, `access` what they may embed). */
export async function answerTableRequest(event: H3Event, action: TableAction, client: AuditedClient, table: TableInfo, access: QueryAccess) {
  return planAndRun(event, client, await readApiRequest(event, action, table, access, undefined))
}

/** Plans a request read, then runs and answers it; a key's write with an Idempotency-Key at most once. */
function planAndRun(event: H3Event, client: AuditedClient, request: ApiRequest, apiKeyId?: string) {
  const plan = planRequest(request)
  if (request.idempotencyKey === undefined) return runAndAnswer(event, client, request, plan)
  return idempotent(event, apiKeyId!, request.idempotencyKey, () => runAndAnswer(event, client, request, plan))
}

async function runAndAnswer(event: H3Event, client: AuditedClient, request: ApiRequest, plan: Plan) {
  const { table } = request
  switch (plan.kind) {
    case 'list': return answerList(event, request, await queryRecords(client, table, request.query!))
    case 'one': return answerRecord(event, request, await getRecord(client, table, request.id!))
    case 'createOne': return answerCreatedRecord(event, request, await createRecord(client, table, request.records[0]))
    case 'create': return answerCreated(event, request, await createRows(client, request, plan))
    case 'update':
    case 'delete': return answerFilteredWrite(event, request, await writeFiltered(client, request, plan))
    case 'updateOne': return answerUpdatedRecord(event, await updateRecord(client, table, request.id!, request.changes, plan.guard))
    case 'deleteOne':
      await deleteRecord(client, table, request.id!, plan.guard)
      return answerDeleted(event)
  }
}
