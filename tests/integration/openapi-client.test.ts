import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { teamWithRoles, type TeamFixture } from '../support/http'
import type { Exchange, SyncResult } from '../support/typed-client'

// The OpenAPI document against the server: TypeScript types generated from the served document
// type-check a small client, and every answer that client gets must be one the document lists,
// with the headers it names and a body its schema accepts.
const generatedRoot = resolve('tests/.generated')
let app: TestApp
let fixture: TeamFixture
let key: string
let document: any
beforeAll(async () => {
  app = await startApp()
  fixture = await teamWithRoles(app)
  key = (await fixture.owner.post(`/api/teams/${fixture.teamId}/api-keys`, { name: 'Typed client' })).body.key
  const answer = await fetch(`${app.url}/api/v1/openapi.json`, { headers: { authorization: `Bearer ${key}` } })
  expect(answer.status).toBe(200)
  document = await answer.json()
})
// this run's folders only: the file runs on both databases at once, in two processes
const madeFolders = new Set<string>()
afterAll(async () => {
  await app?.stop()
  for (const folder of madeFolders) rmSync(folder, { recursive: true, force: true })
})

/** Generates types from `spec` next to a copy of the client and type-checks both; answers the folder and the errors. */
async function typeCheckClient(spec: unknown, name: string): Promise<{ folder: string, errors: string[] }> {
  const folder = join(generatedRoot, `${name}-${process.env.TEST_DB_KIND}-${process.pid}`)
  mkdirSync(folder, { recursive: true })
  madeFolders.add(folder)
  writeFileSync(join(folder, 'api.ts'), astToString(await openapiTS(spec as any)))
  copyFileSync(resolve('tests/support/typed-client.ts'), join(folder, 'client.ts'))
  const program = ts.createProgram([join(folder, 'client.ts')], {
    strict: true,
    noEmit: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
    skipLibCheck: true,
  })
  const errors = ts.getPreEmitDiagnostics(program).map(d => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  return { folder, errors }
}

/** The document's operation for a request, found by method and path template. */
function operationOf(exchange: Exchange) {
  const path = exchange.url.split('?')[0]!
  const template = Object.keys(document.paths).find(t => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path))
  return template ? { template, operation: document.paths[template][exchange.method] } : undefined
}

const pointer = (...parts: string[]) => parts.map(p => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')
const contractHeaders = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'link', 'content-range', 'preference-applied', 'etag', 'idempotent-replayed', 'retry-after']

/** What in an answer the document does not describe (an empty list when it describes all of it). */
function disagreements(exchange: Exchange): string[] {
  const found = operationOf(exchange)
  if (!found?.operation) return [`${exchange.method} ${exchange.url} is not in the document`]
  const response = found.operation.responses[String(exchange.status)]
  if (!response) return [`${exchange.method} ${found.template} answered ${exchange.status}, which the document does not list`]
  const problems: string[] = []
  const documented = Object.keys(response.headers ?? {}).map(h => h.toLowerCase())
  for (const header of contractHeaders) {
    if (exchange.headers.has(header) && !documented.includes(header)) problems.push(`${exchange.method} ${found.template} ${exchange.status} sends ${header}, not documented`)
  }
  const schema = response.content?.['application/json']?.schema
  if (schema) {
    const validate = ajv.getSchema(`openapi#/${pointer('paths', found.template, exchange.method, 'responses', String(exchange.status), 'content', 'application/json', 'schema')}`)!
    if (!validate(exchange.body)) problems.push(`${exchange.method} ${found.template} ${exchange.status} body: ${ajv.errorsText(validate.errors)}`)
  }
  else if (exchange.body !== undefined) {
    problems.push(`${exchange.method} ${found.template} ${exchange.status} has a body the document does not describe`)
  }
  return problems
}

let ajv: Ajv2020
describe('the OpenAPI document and a client typed by it', () => {
  beforeAll(() => {
    ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats(ajv)
    ajv.addSchema({ ...document, $id: 'openapi' })
  })

  it('type-checks a client generated from the served document, and fails to when the document lacks what it uses', async () => {
    const { errors } = await typeCheckClient(document, 'served')
    expect(errors).toEqual([])

    // the same client against a document without `order` on the list and If-Match on the update
    const lacking = structuredClone(document)
    const list = lacking.paths['/api/v1/tasks'].get
    list.parameters = list.parameters.filter((p: { name: string }) => p.name !== 'order')
    const update = lacking.paths['/api/v1/tasks/{id}'].patch
    update.parameters = update.parameters.filter((p: { name: string }) => p.name !== 'If-Match')
    const broken = await typeCheckClient(lacking, 'lacking')
    expect(broken.errors.join('\n')).toMatch(/'order'/)
    expect(broken.errors.join('\n')).toMatch(/'If-Match'/)
  })

  it('runs the client: every answer is documented, and the sync does what the document promises', async () => {
    const { folder } = await typeCheckClient(document, 'run')
    const { syncTasks } = await import(join(folder, 'client.ts')) as { syncTasks: (url: string, key: string, observe: (e: Exchange) => void) => Promise<SyncResult> }
    const exchanges: Exchange[] = []
    const result = await syncTasks(app.url, key, exchange => exchanges.push(exchange))

    expect(exchanges.flatMap(disagreements)).toEqual([])
    expect(exchanges.map(e => e.status)).toEqual([201, 201, 200, 200, 200, 200, 412, 200])
    expect(result.created.map(t => t.title)).toEqual(['Typed 1', 'Typed 2', 'Typed 3', 'Typed 4', 'Typed 5'])
    expect(result.replayed).toBe('true')
    // the four open tasks, highest priority first, three per page, the second page by cursor
    expect(result.pages).toEqual([['Typed 4 (4)', 'Typed 3 (3)', 'Typed 2 (2)'], ['Typed 1 (1)']])
    expect(result.total).toBe('0-2/4')
    expect(result.renamed.title).toBe('Typed 1, renamed')
    expect(result.staleStatus).toBe(412)
    expect(result.titleAfterStale).toBe('Typed 1, renamed')
    const { rows } = await app.db.query(`select count(*)::int as n from public.tasks where team_id = $1 and title like 'Typed%'`, [fixture.teamId])
    expect(rows[0].n).toBe(5)
  })

  it('finds a disagreement when the server answers what the document does not say', async () => {
    const answer = await fetch(`${app.url}/api/v1/tasks?order=nope.asc`, { headers: { authorization: `Bearer ${key}` } })
    const exchange = { method: 'get', url: '/api/v1/tasks?order=nope.asc', status: answer.status, headers: answer.headers, body: await answer.json() }
    expect(disagreements(exchange)).toEqual([])
    expect(disagreements({ ...exchange, status: 418 })).toEqual([`get /api/v1/tasks answered 418, which the document does not list`])
    expect(disagreements({ ...exchange, status: 200, body: [{ id: 'not-a-uuid' }] })[0]).toMatch(/must have required property|must match format/)
  })
})
