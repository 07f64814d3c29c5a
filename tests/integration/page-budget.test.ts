import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { brotliCompressSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outputDir, startApp, type TestApp } from '../support/app'
import { createTeam, KeyClient, signUp, type Client } from '../support/http'
import { pkce, registerClient, startAuthorization } from '../support/oauth'
import { startScriptedModel, type ScriptedModelServer } from '../support/openai-server'

// The scripts a first visit (empty cache) of each page loads before it can answer: the ones its
// server-rendered HTML names (the entry, the page and the pages around it, the components it
// drew, and everything they import statically, as modulepreload links), counted compressed with
// brotli as the server sends them (the build's own files). Bytes do not depend on the machine:
// this guards what `npm run bench:pages` measures with Lighthouse.

const budgetKiB = 250

let app: TestApp
let model: ScriptedModelServer
let owner: Client
const pages: Record<string, string> = {}
const drawn: string[] = []

beforeAll(async () => {
  model = await startScriptedModel()
  app = await startApp({ LLM_PROVIDER_API_KEY: 'test-key', LLM_PROVIDER_BASE_URL: model.url, LLM_MODEL: 'scripted-model' })
  owner = await signUp(app, { name: 'Bea Budget' })
  const teamId = await createTeam(owner, 'Budget Team')
  const key = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Budget key' })
  const task = await new KeyClient(app, key.body.key).post('/api/v1/tasks', { title: 'Weigh the pages' }, { prefer: 'return=representation' })
  const chat = await owner.post('/api/chats', { title: 'Budget chat' })
  const redirectUri = 'http://127.0.0.1:9/callback'
  const consent = await startAuthorization(owner, { clientId: await registerClient(app, [redirectUri]), redirectUri, challenge: pkce().challenge })
  drawn.push('/app', `/app/chat/${chat.body.id}`, `/app/settings/api-keys/${key.body.id}`)
  Object.assign(pages, {
    '/login': '', '/signup': '',
    '/app': owner.cookie,
    '/app/data/tasks': owner.cookie,
    [`/app/data/tasks/${task.body[0].id}`]: owner.cookie,
    '/app/data/tasks/new': owner.cookie,
    '/app/activity': owner.cookie,
    '/app/chat': owner.cookie,
    [`/app/chat/${chat.body.id}`]: owner.cookie,
    '/app/settings': owner.cookie,
    '/app/settings/members': owner.cookie,
    '/app/settings/api-keys': owner.cookie,
    [`/app/settings/api-keys/${key.body.id}`]: owner.cookie,
    '/app/settings/api-log': owner.cookie,
    '/app/settings/webhooks': owner.cookie,
    '/app/settings/connected-apps': owner.cookie,
    [new URL(consent, app.url).pathname + new URL(consent, app.url).search]: owner.cookie,
  })
})
afterAll(async () => {
  await app?.stop()
  await model?.close()
})

const compressedSizes = new Map<string, number>()
function compressedSize(file: string): number {
  let size = compressedSizes.get(file)
  if (size === undefined) {
    size = brotliCompressSync(readFileSync(resolve(outputDir, 'public', file.replace(/^\//, '')))).length
    compressedSizes.set(file, size)
  }
  return size
}

/** The script files a page's HTML loads (its module script and modulepreload links). */
async function scriptsOf(path: string, cookie: string): Promise<Set<string>> {
  const answer = await fetch(`${app.url}${path}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' })
  expect(answer.status, path).toBe(200)
  const html = await answer.text()
  const links = [...html.matchAll(/<link\b[^>]*\brel="modulepreload"[^>]*>/g), ...html.matchAll(/<script\b[^>]*\btype="module"[^>]*>/g)]
  return new Set(links.map(([tag]) => /\b(?:href|src)="([^"]+\.js)"/.exec(tag)?.[1]).filter((file): file is string => !!file))
}

describe('the scripts of a first visit', () => {
  it(`stay within ${budgetKiB} KiB compressed on every page`, async () => {
    // every page first, then the (slow) compression: a connection left idle meanwhile would be closed under the next request
    const visits: [string, Set<string>][] = []
    for (const [path, cookie] of Object.entries(pages)) visits.push([path, await scriptsOf(path, cookie)])
    const sizes = visits.map(([path, files]) => ({ path, scripts: files.size, kib: Math.round([...files].reduce((sum, file) => sum + compressedSize(file), 0) / 1024) }))
    console.info(sizes.map(({ path, scripts, kib }) => `${path}: ${kib} KiB in ${scripts} scripts`).join('\n'))
    // the entry alone is tens of kilobytes: a count that found no files would pass for the wrong reason
    expect(Math.min(...sizes.map(size => size.kib))).toBeGreaterThan(50)
    const over = sizes.filter(({ kib }) => kib > budgetKiB)
    expect(over).toEqual([])
  })

  it('leave the chart drawing, the chat\'s conversation and its markdown to when they are drawn', async () => {
    const file = resolve(outputDir, 'server/chunks/build/client.precomputed.mjs')
    const manifest: { dependencies: Record<string, { preload: Record<string, { file: string }> }> } = (await import(pathToFileURL(file).href)).default
    const lazy = ['components/app/BarChartDrawing.vue', 'components/chat/Conversation.vue', 'components/chat/Markdown.vue']
      .map(component => ({ component, file: `/_nuxt/${manifest.dependencies[component]?.preload[component]?.file}` }))
    for (const { component, file } of lazy) expect(file, `${component} is a chunk of its own`).not.toMatch(/undefined$/)
    for (const path of drawn) {
      const files = await scriptsOf(path, owner.cookie)
      expect(files.size, path).toBeGreaterThan(3)
      expect(lazy.filter(({ file }) => files.has(file)), path).toEqual([])
    }
  })
})
