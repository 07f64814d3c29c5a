import { Agent, request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, teamWithRoles } from '../support/http'

// Every request gets an answer, and the same request always reaches the same handler, whatever
// came before it. Raw node:http requests, as any client sends them (a body with Content-Length).
let app: TestApp
let api: KeyClient
let taskId: string
beforeAll(async () => {
  app = await startApp()
  const team = await teamWithRoles(app)
  const key = await team.owner.post(`/api/teams/${team.teamId}/api-keys`, { name: 'Routing' })
  api = new KeyClient(app, key.body.key)
  taskId = (await api.post('/api/v1/tasks', { title: 'Routed' })).body.id
})
afterAll(() => app?.stop())

interface RawAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One request over node:http; fails (instead of waiting for ever) when no answer comes within 10 s. */
function send(method: string, path: string, body?: string, headers: Record<string, string> = {}, { base = app.url, agent }: { base?: string, agent?: Agent } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(path, base), {
      method,
      agent,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...headers },
    }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk) => {
        text += chunk
      })
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }))
    })
    request.setTimeout(10_000, () => request.destroy(new Error(`no answer to ${method} ${path} within 10 s`)))
    request.on('error', reject)
    request.end(body)
  })
}

describe('requests to paths without a route', () => {
  it('answers 404 to a request with a body as it does without one', async () => {
    for (const [method, path] of [['POST', '/api/nonexistent'], ['PATCH', '/api/nonexistent'], ['PUT', '/api/v1/tasks/x/y'], ['PATCH', '/foo']]) {
      const withBody = await send(method!, path!, '{"title":"x"}')
      const without = await send(method!, path!)
      expect(withBody.status, `${method} ${path} with a body`).toBe(404)
      expect(without.status, `${method} ${path} without a body`).toBe(404)
    }
    const api404 = await send('POST', '/api/nonexistent', '{"a":1}')
    expect(JSON.parse(api404.body).error).toMatch(/not found/i)
  })

  it('answers a body sent to a route that takes none', async () => {
    const answer = await send('GET', '/api/health', '{"a":1}')
    expect(answer.status).toBe(200)
    const page = await send('GET', '/login', '{"a":1}')
    expect(page.status).toBe(200)
  })
})

describe('methods a route does not have', () => {
  // (/api/v1/{table} itself takes PATCH and DELETE by filter: the webhook endpoints' list does not)
  it('answers 405 naming the allowed methods, the same before and after a HEAD', async () => {
    const auth = { authorization: `Bearer ${api.key}` }
    const before = await send('PATCH', '/api/v1/webhook-endpoints', '{"url":"http://example.com/x"}', auth)
    const deleteBefore = await send('DELETE', '/api/v1/webhook-endpoints', undefined, auth)
    const head = await send('HEAD', '/api/v1/webhook-endpoints', undefined, auth)
    const after = await send('PATCH', '/api/v1/webhook-endpoints', '{"url":"http://example.com/x"}', auth)
    const deleteAfter = await send('DELETE', '/api/v1/webhook-endpoints', undefined, auth)
    for (const answer of [before, after, deleteBefore, deleteAfter]) {
      expect(answer.status).toBe(405)
      expect(answer.headers.allow).toBe('GET, HEAD, POST')
      expect(answer.headers['content-type']).toMatch(/application\/json/)
      expect(JSON.parse(answer.body).error).toMatch(/this path takes GET, HEAD, POST/)
    }
    // HEAD is GET without the body (this key lacks the webhooks scope: the GET's own 403)
    const get = await send('GET', '/api/v1/webhook-endpoints', undefined, auth)
    expect(head.status).toBe(get.status)
    expect(head.body).toBe('')
    // nothing was written by any of them
    const { rows } = await app.db.query<{ title: string }>('select title from public.tasks where id = $1', [taskId])
    expect(rows).toEqual([{ title: 'Routed' }])
    const endpoints = await app.db.query('select 1 from public.webhook_endpoints')
    expect(endpoints.rowCount).toBe(0)
  })

  it('keeps answering HEAD like GET, and other methods on one record with 405', async () => {
    const auth = { authorization: `Bearer ${api.key}` }
    const get = await send('GET', `/api/v1/tasks/${taskId}`, undefined, auth)
    const head = await send('HEAD', `/api/v1/tasks/${taskId}`, undefined, auth)
    expect(head.status).toBe(get.status)
    expect(head.headers.etag).toBe(get.headers.etag)
    const put = await send('PUT', `/api/v1/tasks/${taskId}`, '{"title":"Replaced"}', auth)
    expect(put.status).toBe(405)
    expect(put.headers.allow).toBe('DELETE, GET, HEAD, PATCH')
    expect(await send('POST', '/api/health', '{}').then(a => a.status)).toBe(405)
    expect(await send('HEAD', '/api/health').then(a => a.status)).toBe(200)
  })
})

describe('stopping', () => {
  it('stops while a kept-alive connection has sent a body to a path without a route', async () => {
    const own = await startApp()
    const agent = new Agent({ keepAlive: true })
    try {
      const answer = await send('POST', '/api/nonexistent', '{"a":1}', {}, { base: own.url, agent })
      expect(answer.status).toBe(404)
    }
    finally {
      await own.stop()
      agent.destroy()
    }
    expect(own.hasExited).toBe(true)
  })
})
