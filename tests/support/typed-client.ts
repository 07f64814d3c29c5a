// A small integration written against the types that openapi-typescript generates from the served
// OpenAPI document. The test copies this file next to the generated `api.ts`, type-checks both
// (so a parameter, header or field the document lacks fails the test), then runs it.
import type { components, paths } from './api'

type Method = 'get' | 'post' | 'patch' | 'delete'
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>
type Parameters<O, In extends 'query' | 'header' | 'path'> = O extends { parameters: { [K in In]?: infer X } } ? NonNullable<X> : never
type RequestBody<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B : never
type Answer<O, S extends number> = O extends { responses: { [K in S]: { content: { 'application/json': infer R } } } } ? R : never

interface CallOptions<O> {
  path?: Parameters<O, 'path'>
  query?: Parameters<O, 'query'>
  header?: Parameters<O, 'header'>
  body?: RequestBody<O>
}

export interface Exchange { method: string, url: string, status: number, headers: Headers, body: unknown }

type Task = components['schemas']['tasks']
type NewTask = components['schemas']['tasks_create']
type TaskChange = components['schemas']['tasks_update']

/** Calls one documented operation; the path, query, headers and body are typed by the document. */
function client(baseUrl: string, key: string, observe: (exchange: Exchange) => void) {
  return async function call<P extends keyof paths, M extends Method>(method: M, path: P, options: CallOptions<Operation<P, M>> = {}) {
    let url = String(path)
    for (const [name, value] of Object.entries(options.path ?? {})) url = url.replace(`{${name}}`, encodeURIComponent(String(value)))
    const query = new URLSearchParams()
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) query.append(name, String(value))
    }
    if (query.size) url += `?${query}`
    const headers: Record<string, string> = { authorization: `Bearer ${key}` }
    for (const [name, value] of Object.entries(options.header ?? {})) headers[name] = String(value)
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const response = await fetch(baseUrl + url, {
      method: method.toUpperCase(),
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    })
    const text = await response.text()
    const exchange = { method, url, status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
    observe(exchange)
    return exchange
  }
}

/** The cursor of the next page, from a `Link: <...?cursor=...>; rel="next"` header. */
function nextCursor(headers: Headers): string | undefined {
  const link = headers.get('link')?.match(/<([^>]+)>;\s*rel="next"/)
  return link ? new URL(link[1]!, 'http://x').searchParams.get('cursor') ?? undefined : undefined
}

export interface SyncResult {
  created: Task[]
  replayed: string | null
  pages: string[][]
  total: string | null
  renamed: Task
  staleStatus: number
  titleAfterStale: string
}

/**
 * What a task-syncing integration does: import tasks once (retrying safely), read the open ones
 * page by page, then rename one only if nobody changed it meanwhile.
 */
export async function syncTasks(baseUrl: string, key: string, observe: (exchange: Exchange) => void): Promise<SyncResult> {
  const call = client(baseUrl, key, observe)
  const batch: NewTask[] = [1, 2, 3, 4, 5].map(n => ({ title: `Typed ${n}`, status: n === 5 ? 'in_progress' : 'todo', priority: n }))
  const idempotency = { 'Idempotency-Key': 'typed-import-1' }
  const first = await call('post', '/api/v1/tasks', { body: batch, header: idempotency })
  const retry = await call('post', '/api/v1/tasks', { body: batch, header: idempotency })
  const created = first.body as Task[]

  const pages: string[][] = []
  let total: string | null = null
  let cursor: string | undefined
  do {
    const page = await call('get', '/api/v1/tasks', {
      query: { status: 'eq.todo', title: 'like.Typed*', order: 'priority.desc', select: 'id,title,priority,updated_at', limit: 3, cursor },
      header: { Prefer: 'count=exact' },
    })
    const rows = page.body as Answer<Operation<'/api/v1/tasks', 'get'>, 200>
    pages.push(rows.map(task => `${task.title} (${task.priority})`))
    total ??= page.headers.get('content-range')
    cursor = nextCursor(page.headers)
  } while (cursor)

  const target = created[0]!
  const read = await call('get', '/api/v1/tasks/{id}', { path: { id: target.id } })
  const etag = read.headers.get('etag') ?? ''
  const change: TaskChange = { title: 'Typed 1, renamed' }
  const renamed = await call('patch', '/api/v1/tasks/{id}', { path: { id: target.id }, header: { 'If-Match': etag }, body: change })
  const stale = await call('patch', '/api/v1/tasks/{id}', { path: { id: target.id }, header: { 'If-Match': etag }, body: { title: 'Lost update' } })
  const after = await call('get', '/api/v1/tasks/{id}', { path: { id: target.id }, header: { 'If-None-Match': etag } })

  return {
    created,
    replayed: retry.headers.get('idempotent-replayed'),
    pages,
    total,
    renamed: renamed.body as Task,
    staleStatus: stale.status,
    titleAfterStale: (after.body as Task).title,
  }
}
