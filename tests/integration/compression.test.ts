import { request } from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client, createTeam, signUp } from '../support/http'

let app: TestApp
beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app?.stop())

interface RawAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The bytes as they came over the wire (fetch would decompress them). */
  body: Buffer
}

function rawGet(path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    request(`${app.url}${path}`, { headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', chunk => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    }).on('error', reject).end()
  })
}

async function entryScript(): Promise<string> {
  const page = await rawGet('/login')
  expect(page.status).toBe(200)
  const scripts = [...page.body.toString('utf8').matchAll(/<script[^>]+src="(\/_nuxt\/[^"]+\.js)"/g)].map(m => m[1]!)
  expect(scripts.length).toBeGreaterThan(0)
  return scripts[0]!
}

describe('compressed answers', () => {
  it('serves the built JavaScript brotli- or gzip-compressed to clients that accept it, and plain to others', async () => {
    const script = await entryScript()
    const plain = await rawGet(script)
    expect(plain.status).toBe(200)
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(plain.headers['content-type']).toMatch(/javascript/)

    const br = await rawGet(script, { 'accept-encoding': 'gzip, deflate, br' })
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.headers.vary).toMatch(/accept-encoding/i)
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true)
    expect(br.body.length).toBeLessThan(plain.body.length * 0.5)

    const gz = await rawGet(script, { 'accept-encoding': 'gzip' })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true)
    expect(gz.body.length).toBeLessThan(plain.body.length * 0.5)
  })

  it('compresses the API\'s JSON when asked, leaves small answers and clients that do not ask alone', async () => {
    const owner = await signUp(app)
    const teamId = await createTeam(owner, 'Compressed Team')
    const key = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'compression' })).body.key as string
    const api = new Client(app)
    const auth = { authorization: `Bearer ${key}` }
    for (let i = 0; i < 30; i++) expect((await api.post('/api/v1/notes', { title: `note ${i}`, body: 'some text '.repeat(20) }, auth)).status).toBe(201)

    const plain = await rawGet('/api/v1/notes', auth)
    expect(plain.status).toBe(200)
    expect(plain.headers['content-encoding']).toBeUndefined()
    const notes = JSON.parse(plain.body.toString('utf8'))
    expect(notes).toHaveLength(30)

    const br = await rawGet('/api/v1/notes', { ...auth, 'accept-encoding': 'br;q=1, gzip;q=0.5' })
    expect(br.status).toBe(200)
    expect(br.headers['content-encoding']).toBe('br')
    expect(br.headers['content-type']).toMatch(/application\/json/)
    expect(br.headers.vary).toMatch(/accept-encoding/i)
    expect(JSON.parse(brotliDecompressSync(br.body).toString('utf8'))).toEqual(notes)
    expect(br.body.length).toBeLessThan(plain.body.length / 3)

    const gz = await rawGet('/api/v1/notes', { ...auth, 'accept-encoding': 'gzip, br;q=0' })
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(JSON.parse(gunzipSync(gz.body).toString('utf8'))).toEqual(notes)

    // a session route's JSON too
    const activity = await rawGet(`/api/teams/${teamId}/activity?table=notes`, { 'cookie': owner.cookie, 'accept-encoding': 'gzip' })
    expect(activity.status).toBe(200)
    expect(activity.headers['content-encoding']).toBe('gzip')
    expect(JSON.parse(gunzipSync(activity.body).toString('utf8')).total).toBe(30)

    // a stream that is flushed as it is written (the activity export) goes out as it is
    const exported = await rawGet(`/api/teams/${teamId}/activity/export?format=ndjson&table=notes`, { 'cookie': owner.cookie, 'accept-encoding': 'gzip, br' })
    expect(exported.status).toBe(200)
    expect(exported.headers['content-encoding']).toBeUndefined()
    expect(exported.body.toString('utf8').trim().split('\n')).toHaveLength(30)

    // under a kilobyte is not worth compressing
    const small = await rawGet('/api/health', { 'accept-encoding': 'gzip, br' })
    expect(small.headers['content-encoding']).toBeUndefined()
    expect(JSON.parse(small.body.toString('utf8'))).toEqual({ ok: true })
    const missing = await rawGet('/api/v1/no_such_table', { ...auth, 'accept-encoding': 'gzip, br' })
    expect(missing.status).toBe(404)
    expect(JSON.parse(missing.body.toString('utf8')).error).toMatch(/no_such_table/)
  })
  it('compresses the server-rendered pages when asked, signed in and out, and leaves clients that do not ask alone', async () => {
    const owner = await signUp(app)
    await createTeam(owner, 'Rendered Team')
    for (const [path, cookie] of [['/login', ''], ['/app/settings/members', owner.cookie]] as const) {
      const headers: Record<string, string> = cookie ? { cookie } : {}
      const plain = await rawGet(path, headers)
      expect(plain.status).toBe(200)
      expect(plain.headers['content-type']).toMatch(/text\/html/)
      expect(plain.headers['content-encoding']).toBeUndefined()
      const html = plain.body.toString('utf8')
      expect(html).toMatch(/^<!DOCTYPE html>/i)

      const br = await rawGet(path, { ...headers, 'accept-encoding': 'gzip, deflate, br' })
      expect(br.status).toBe(200)
      expect(br.headers['content-encoding']).toBe('br')
      expect(br.headers.vary).toMatch(/accept-encoding/i)
      const unpacked = brotliDecompressSync(br.body).toString('utf8')
      expect(unpacked).toMatch(/^<!DOCTYPE html>/i)
      expect(unpacked).toContain(cookie ? 'Rendered Team' : 'Sign in')
      expect(br.body.length).toBeLessThan(Buffer.byteLength(unpacked) / 3)

      const gz = await rawGet(path, { ...headers, 'accept-encoding': 'gzip' })
      expect(gz.headers['content-encoding']).toBe('gzip')
      expect(gunzipSync(gz.body).toString('utf8')).toMatch(/^<!DOCTYPE html>/i)
    }
  })
})
