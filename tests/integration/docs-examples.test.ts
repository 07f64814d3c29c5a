import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { Client } from '../support/http'

/*
 * The docs' curl examples, run against a real app, so that they cannot drift from what it answers.
 *
 * Which examples: every fenced ```sh block that calls curl, in docs/*.md and server/api/v1/README.md.
 * Each block runs as one bash script (with curl and jq), on its own, in order from its first line.
 *
 * What a block is given:
 * - `$BASE`: the app's origin, and `$KEY`: an API key of the demo team that may write every table
 *   and the webhook endpoints. A line `BASE=...` or `KEY=...` in the block is left out (it is there
 *   for the reader), and `http://localhost:3000` and `https://workspace.example.com` read as `$BASE`.
 * - The demo data as a newcomer has it after the first start (demo@example.com / demo-password
 *   owns "Demo Team"), and nothing more: an example shows what the demo answers.
 * - Nothing else: an id or an ETag a command needs comes from an earlier command of the same block
 *   (`TASK=$(curl ... | jq -r .id)`), never from a placeholder such as `<id>`.
 *
 * Every curl command is silent (`-s`): what it prints is the answer, not a progress meter.
 *
 * What is checked: every request a block makes (one per curl, in order) answers below 400, unless
 * the command is followed, on the next line, by the answer it gets:
 *
 *     curl -s "$BASE/api/v1/tasks" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
 *       -d '{"title": "x", "priority": 9}'
 *     # 400 {"error": "priority: must be an integer between 1 and 5", "code": "23514", ...}
 *
 * `# <status>` alone checks the status; a JSON shape after it checks the body too: the same keys
 * (`...` as the last item of an object or array: more may follow), the same values, where `"..."`
 * is any value and `...` inside a string any text. A new example (the events feed, the API log) is
 * checked as soon as it is in a ```sh block of these files.
 */

const files = [...readdirSync('docs').filter(name => name.endsWith('.md')).map(name => `docs/${name}`), 'server/api/v1/README.md']

interface Expectation {
  /** The command's first line, for messages. */
  command: string
  status: number | null
  shape: unknown
}

interface Example {
  file: string
  line: number
  script: string
  /** One per curl command, in order. */
  expectations: Expectation[]
}

/** The blocks of a file that call curl, each with what its commands expect. */
function examplesOf(file: string): Example[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  const examples: Example[] = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```sh') continue
    const start = i + 1
    let end = start
    while (end < lines.length && lines[end]!.trim() !== '```') end++
    const block = lines.slice(start, end)
    i = end
    if (!block.some(line => /(^|[\s($])curl\s/.test(line) && !line.trim().startsWith('#'))) continue
    const expectations: Expectation[] = []
    for (let j = 0; j < block.length; j++) {
      const line = block[j]!
      if (line.trim().startsWith('#') || !/(^|[\s($])curl\s/.test(line)) continue
      let last = j
      while (block[last]!.trimEnd().endsWith('\\') && last + 1 < block.length) last++
      const next = /^#\s+(\d{3})(?:\s+(.*))?$/.exec(block[last + 1]?.trim() ?? '')
      expectations.push({ command: line.trim(), status: next ? Number(next[1]) : null, shape: next?.[2] ? parseShape(next[2]) : undefined })
      j = last
    }
    const script = block
      .filter(line => !/^(BASE|KEY)=/.test(line))
      .join('\n')
      .replaceAll('http://localhost:3000', '$BASE')
      .replaceAll('https://workspace.example.com', '$BASE')
    examples.push({ file, line: start, script, expectations })
  }
  return examples
}

const more = '__more__'
const any = '__any__'

/** A shape as the docs write it (JSON with `...`) as JSON with markers. */
function parseShape(text: string): unknown {
  let out = ''
  const stack: string[] = []
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (char === '"') {
      const close = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(i))![0]
      out += close
      i += close.length - 1
    }
    else if (text.startsWith('...', i)) {
      out += stack.at(-1) === '{' ? `"${more}": true` : `"${more}"`
      i += 2
    }
    else {
      if (char === '{' || char === '[') stack.push(char)
      if (char === '}' || char === ']') stack.pop()
      out += char
    }
  }
  return JSON.parse(out)
}

/** Where `actual` differs from the shape `expected`, or null when it matches. */
function mismatch(expected: unknown, actual: unknown, path = 'body'): string | null {
  if (expected === any || expected === '...') return null
  if (typeof expected === 'string' && expected.includes('...')) {
    const pattern = new RegExp(`^${expected.split('...').map(part => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's')
    return typeof actual === 'string' && pattern.test(actual) ? null : `${path}: ${JSON.stringify(actual)} does not match ${JSON.stringify(expected)}`
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: ${JSON.stringify(actual)} is not an array`
    const open = expected.includes(more)
    const items = expected.filter(item => item !== more)
    if (open ? actual.length < items.length : actual.length !== items.length) return `${path}: ${actual.length} items, the docs show ${items.length}${open ? ' or more' : ''}`
    for (const [i, item] of items.entries()) {
      const problem = mismatch(item, actual[i], `${path}[${i}]`)
      if (problem) return problem
    }
    return null
  }
  if (expected && typeof expected === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: ${JSON.stringify(actual)} is not an object`
    const shown = Object.keys(expected).filter(key => key !== more)
    if (!(more in expected)) {
      const extra = Object.keys(actual).filter(key => !shown.includes(key))
      if (extra.length) return `${path}: has ${extra.join(', ')}, which the docs do not show (end the object with ... if more may follow)`
    }
    for (const key of shown) {
      if (!(key in actual)) return `${path}.${key}: missing`
      const problem = mismatch((expected as Record<string, unknown>)[key], (actual as Record<string, unknown>)[key], `${path}.${key}`)
      if (problem) return problem
    }
    return null
  }
  return Object.is(expected, actual) ? null : `${path}: ${JSON.stringify(actual)}, the docs show ${JSON.stringify(expected)}`
}

interface Exchange { method: string, path: string, status: number, body: string }

/** A reverse proxy that records every request and its answer, in order. */
async function startRecorder(upstream: () => string) {
  const exchanges: Exchange[] = []
  const server = createServer((request, response) => {
    const target = new URL(request.url ?? '/', upstream())
    const forward = httpRequest(target, { method: request.method, headers: { ...request.headers, host: target.host }, agent: false }, (answer) => {
      // passed on as it arrives (an event stream never ends by itself), recorded when it ends or
      // when the client hangs up (curl --max-time)
      const chunks: Buffer[] = []
      let isRecorded = false
      const record = () => {
        if (isRecorded) return
        isRecorded = true
        exchanges.push({ method: request.method ?? 'GET', path: request.url ?? '/', status: answer.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') })
      }
      response.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.on('data', (chunk: Buffer) => {
        chunks.push(chunk)
        response.write(chunk)
      })
      answer.on('end', () => {
        record()
        response.end()
      })
      response.on('close', () => {
        record()
        answer.destroy()
      })
    })
    forward.on('error', (error) => {
      response.writeHead(502)
      response.end(error.message)
    })
    request.pipe(forward)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

let app: TestApp
let recorder: Awaited<ReturnType<typeof startRecorder>>
let key: string

beforeAll(async () => {
  recorder = await startRecorder(() => app.url)
  // links in answers (the next page) point at the recorder, so following them is recorded too
  app = await startApp({ NUXT_SEED_DEMO: 'true', NUXT_BASE_URL: recorder.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
  // a production build seeds the demo with a fresh password; the docs use the published one (npm run dev)
  const published = /'(\$scrypt\$[^']+)'/.exec(readFileSync('supabase/seed.sql', 'utf8'))![1]
  await app.db.query('update auth.users set encrypted_password = $1', [published])
  const owner = new Client(app)
  expect((await owner.post('/api/auth/login', { email: 'demo@example.com', password: 'demo-password' })).status).toBe(200)
  const teamId = (await owner.get('/api/auth/me')).body.current_team_id as string
  const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Docs examples', scopes: { '*': 'write', 'webhooks': 'write' } })
  expect(created.status).toBe(201)
  key = created.body.key
})

afterAll(async () => {
  await app?.stop()
  await recorder?.close()
})

/** Runs a block's script with bash; resolves with its output (a failing command does not stop it). */
function run(script: string): Promise<{ code: number, output: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { env: { PATH: process.env.PATH, HOME: process.env.HOME, BASE: recorder.url, KEY: key }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` })
    })
  })
}

const examples = files.flatMap(examplesOf)

describe('the docs\' curl examples', () => {
  it('are found in the docs (the format below is the one the files use)', () => {
    expect(examples.length).toBeGreaterThanOrEqual(6)
    expect(examples.map(example => example.file)).toEqual(expect.arrayContaining(['docs/api.md', 'docs/agents.md', 'server/api/v1/README.md']))
  })

  it('are silent: every curl command has -s', () => {
    const loud = examples.flatMap(example => example.expectations.map(expectation => `${example.file}: ${expectation.command}`))
      .filter(command => !/(^|\s)(-[A-Za-z]*s[A-Za-z]*|--silent)(\s|$)/.test(command.slice(command.indexOf('curl'))))
    expect(loud).toEqual([])
  })

  it.each(examples.map(example => [`${example.file}:${example.line}`, example] as const))('%s answers what the docs show', async (_, example) => {
    const first = recorder.exchanges.length
    const { output } = await run(example.script)
    const exchanges = recorder.exchanges.slice(first)
    expect(exchanges.map(exchange => `${exchange.method} ${exchange.path}`), `one request per curl command; the script printed:\n${output}`)
      .toHaveLength(example.expectations.length)
    for (const [i, expectation] of example.expectations.entries()) {
      const exchange = exchanges[i]!
      const where = `${example.file}: ${expectation.command}\n-> ${exchange.status} ${exchange.body.slice(0, 500)}`
      if (expectation.status === null) expect(exchange.status, where).toBeLessThan(400)
      else expect(exchange.status, where).toBe(expectation.status)
      if (expectation.shape !== undefined) {
        let body: unknown
        try {
          body = JSON.parse(exchange.body)
        }
        catch {
          body = exchange.body
        }
        expect(mismatch(expectation.shape, body), where).toBeNull()
      }
    }
  })
})
