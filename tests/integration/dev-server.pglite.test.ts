import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDevServer, type DevServer } from '../support/dev-server'

// `npm run dev` as a newcomer starts it (the embedded database, seeded): requests reach the app
// through the dev server's proxy, which behaves unlike a client talking to the built app. A body
// over the limit sent in chunks was refused by the app while the proxy was still sending it, and
// the proxy lost the answer: the client waited minutes for the dev server's 408 instead of a 413.
// The dev server runs on the embedded database only (as `npm run dev` does), so this file runs in
// the PGlite project alone.

let dev: DevServer
let url: string

beforeAll(async () => {
  dev = await startDevServer()
  url = dev.url
}, 300_000)

afterAll(() => dev?.stop())

/** POSTs `payload` in chunks of up to 64 KiB (no Content-Length) and answers what came back, or fails after 30 s. */
function postChunked(path: string, payload: Buffer): Promise<{ status: number, body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const sending = request(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => text += chunk)
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }))
    })
    sending.setTimeout(30_000, () => sending.destroy(new Error(`no answer to POST ${path} within 30 s`)))
    sending.on('error', reject)
    let sent = 0
    const write = () => {
      while (sent < payload.length) {
        const chunk = payload.subarray(sent, sent + 64 * 1024)
        sent += chunk.length
        if (!sending.write(chunk)) return sending.once('drain', write)
      }
      sending.end()
    }
    write()
  })
}

describe('a chunked body over 1 MiB under npm run dev', () => {
  it('is answered 413 on the session routes and the public API, every time', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      for (const path of ['/api/auth/login', '/api/teams', '/api/v1/tasks']) {
        const answer = await postChunked(path, Buffer.alloc(2 * 1024 * 1024, 'a'))
        expect(answer.status, `${path}, attempt ${attempt + 1}`).toBe(413)
        expect(answer.body.code, path).toBe('payload_too_large')
      }
    }
  })

  it('still reads a body within the limit, sent the same way', async () => {
    const answer = await postChunked('/api/auth/login', Buffer.from(JSON.stringify({ email: 'nobody@example.com', password: 'not a password of anyone' })))
    expect(answer.status).toBe(401)
  }, 60_000)
})
