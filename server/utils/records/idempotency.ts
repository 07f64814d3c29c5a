import { createHash } from 'node:crypto'
import type { H3Event } from 'h3'
import { useDb } from '../db/database'

// How long a claim without an answer holds before another request may take it over.
const abandonedAfterSeconds = 60

interface IdempotencyRow {
  request_hash: string
  status: number | null
  body: string | null
}

/**
 * Runs a public API write at most once per `Idempotency-Key` (per API key, for 24 hours): the
 * first request claims the key and its answer is stored; the same request again gets that answer
 * with `Idempotent-Replayed: true` and writes nothing. The same key with another method, path, query or
 * body is a 422; while the first is still running, a 409. `key`: the request's Idempotency-Key, as
 * the request was read (1 to 255 characters).
 */
export async function idempotent<T>(event: H3Event, apiKeyId: string, key: string, run: () => Promise<T>): Promise<T> {
  const raw = await readRawBody(event, false)
  // the path with its query string: `PATCH /tasks?id=eq.1` and `?id=eq.2` are different requests
  const requestHash = createHash('sha256').update(`${event.method} ${event.path}\n`).update(raw ?? Buffer.alloc(0)).digest('hex')
  const db = await useDb()
  await db.query(
    `delete from public.idempotency_keys where api_key_id = $1 and key = $2
       and (expires_at <= now() or (status is null and created_at < now() - make_interval(secs => $3)))`,
    [apiKeyId, key, abandonedAfterSeconds],
  )
  const claimed = await db.query(
    'insert into public.idempotency_keys (api_key_id, key, request_hash) values ($1, $2, $3) on conflict do nothing',
    [apiKeyId, key, requestHash],
  )
  if (!claimed.rowCount) return replay(event, apiKeyId, key, requestHash)
  let result: T
  try {
    result = await run()
  }
  catch (error) {
    // nothing was written: the key is free for a corrected request
    await db.query('delete from public.idempotency_keys where api_key_id = $1 and key = $2', [apiKeyId, key])
    throw error
  }
  await db.query(
    'update public.idempotency_keys set status = $3, body = $4 where api_key_id = $1 and key = $2',
    [apiKeyId, key, getResponseStatus(event), result === null || result === undefined ? null : JSON.stringify(result)],
  )
  return result
}

async function replay<T>(event: H3Event, apiKeyId: string, key: string, requestHash: string): Promise<T> {
  const { rows } = await (await useDb()).query<IdempotencyRow>(
    'select request_hash, status, body from public.idempotency_keys where api_key_id = $1 and key = $2',
    [apiKeyId, key],
  )
  const first = rows[0]
  // claimed and released between the two statements: the caller may simply retry
  const running = createError({ statusCode: 409, statusMessage: 'A request with this Idempotency-Key is still running; retry in a moment' })
  // (no row: the first was released between the two statements, and a retry will claim it)
  if (!first) throw running
  if (first.request_hash !== requestHash) throw createError({ statusCode: 422, statusMessage: 'This Idempotency-Key was used for a different request (method, path, query or body)' })
  if (first.status === null) throw running
  setResponseStatus(event, first.status)
  setResponseHeader(event, 'idempotent-replayed', 'true')
  return (first.body === null ? null : JSON.parse(first.body)) as T
}
