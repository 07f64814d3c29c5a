// npm run bench:pages — Lighthouse (its mobile defaults: simulated slow 4G, a 4x slower CPU) over
// every page of the app, signed in, on data like the demo's: the built app on a fresh database of
// the machine's Postgres, a team with a key, twelve tasks and their activity, a webhook endpoint, a
// chat (the chat is enabled by the scripted model server of the tests) and an OAuth client waiting
// at the consent page. The median of several runs per page; the table is printed and written to
// docs/benchmarks.md under "Pages" (only that section is replaced).
//
// Options: --runs N (default 3), --only /path,/path (pages whose path starts so), --no-build (use
// the build as it is: APP_BUILD_DIR is honoured), --no-write (print only), --save DIR (each page's
// last Lighthouse report, as JSON, into DIR).
// Database: TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres. Chromium:
// CHROMIUM_PATH, else /usr/bin/chromium.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import * as chromeLauncher from 'chrome-launcher'
import lighthouse from 'lighthouse'
import WebSocket from 'ws'

process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres'
process.env.TEST_DB_KIND = 'postgres'

const { startApp, outputDir } = await import('./harness/app')
const { serverTemplate } = await import('./harness/database')
const { default: buildAndPrepare } = await import('./harness/build')
const { createTeam, KeyClient, signUp } = await import('./harness/http')
const { pkce, registerClient, startAuthorization } = await import('./harness/oauth')
const { startScriptedModel } = await import('./harness/openai-server')

const { values: args } = parseArgs({
  options: {
    'runs': { type: 'string', default: '3' },
    'only': { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    'save': { type: 'string' },
  },
})
const runs = Math.max(1, Number(args.runs))

interface Sample {
  score: number
  fcp: number
  lcp: number
  tbt: number
  cls: number
  scriptBytes: number
  requests: number
}

interface Row {
  name: string
  path: string
  samples: Sample[]
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** The demo-like team: answers the owner's session cookie and the pages to visit. */
async function seed(app: { url: string }): Promise<{ cookie: string, pages: { name: string, path: string }[] }> {
  const owner = await signUp(app, { name: 'Dana Demo' })
  const teamId = await createTeam(owner, 'Demo Team')
  const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Integration key' })
  if (created.status !== 201) throw new Error(`key: ${created.status} ${JSON.stringify(created.body)}`)
  const api = new KeyClient(app, created.body.key)
  const project = await api.post('/api/v1/projects', { name: 'Website relaunch', description: 'New marketing site with the updated brand.', status: 'active' }, { prefer: 'return=representation' })
  if (project.status !== 201) throw new Error(`project: ${project.status} ${JSON.stringify(project.body)}`)
  const projectId = project.body[0].id
  const titles = ['Write the homepage copy', 'Pick the hero images', 'Set up analytics', 'Launch checklist', 'Design the onboarding screens', 'Push notifications',
    'App store listing', 'Crash reporting', 'Book the movers', 'Renew the team offsite booking', 'Plan the beta', 'Collect feedback']
  const statuses = ['todo', 'in_progress', 'done']
  const tasks = await api.post('/api/v1/tasks', titles.map((title, i) => ({ title, status: statuses[i % 3], ...(i % 3 === 2 ? { completed_at: new Date().toISOString() } : {}), priority: 1 + (i % 5), project_id: i % 2 ? projectId : null })), { prefer: 'return=representation' })
  if (tasks.status !== 201) throw new Error(`tasks: ${tasks.status} ${JSON.stringify(tasks.body)}`)
  const taskId = tasks.body[0].id
  // some activity: updates by the key and by the owner
  for (const task of tasks.body.slice(0, 4)) await api.patch(`/api/v1/tasks?id=eq.${task.id}`, { status: 'done', completed_at: new Date().toISOString() })
  await api.get('/api/v1/tasks?limit=5')
  await api.get('/api/v1/nothing-here')
  const endpoint = await owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url: 'http://127.0.0.1:9/hook', events: ['*'] })
  if (endpoint.status !== 201) throw new Error(`webhook endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`)
  const chat = await owner.post('/api/chats', { title: 'Open tasks' })
  const redirectUri = 'http://127.0.0.1:9/callback'
  const clientId = await registerClient(app, [redirectUri], 'Bench Agent')
  const consent = await startAuthorization(owner, { clientId, redirectUri, challenge: pkce().challenge })
  return {
    cookie: owner.cookie,
    pages: [
      { name: 'Overview', path: '/app' },
      { name: 'Data list', path: '/app/data/tasks' },
      { name: 'Record', path: `/app/data/tasks/${taskId}` },
      { name: 'Activity', path: '/app/activity' },
      { name: 'Chat', path: '/app/chat' },
      ...(chat.status === 201 ? [{ name: 'A chat', path: `/app/chat/${chat.body.id}` }] : []),
      { name: 'Settings: General', path: '/app/settings' },
      { name: 'Settings: Members', path: '/app/settings/members' },
      { name: 'Settings: API keys', path: '/app/settings/api-keys' },
      { name: 'A key', path: `/app/settings/api-keys/${created.body.id}` },
      { name: 'Settings: API log', path: '/app/settings/api-log' },
      { name: 'Settings: Webhooks', path: '/app/settings/webhooks' },
      { name: 'Settings: Connected apps', path: '/app/settings/connected-apps' },
      { name: 'Consent', path: new URL(consent, app.url).pathname + new URL(consent, app.url).search },
    ],
  }
}

/** Sends one DevTools command to the browser itself (not a page) and waits for its answer. */
async function browserCommand(port: number, method: string, params: Record<string, unknown> = {}): Promise<void> {
  const { webSocketDebuggerUrl } = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json() as { webSocketDebuggerUrl: string }
  const socket = new WebSocket(webSocketDebuggerUrl)
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  try {
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (data) => {
        const answer = JSON.parse(String(data)) as { id?: number, error?: { message: string } }
        if (answer.id !== 1) return
        if (answer.error) reject(new Error(`${method}: ${answer.error.message}`))
        else resolve()
      })
      socket.send(JSON.stringify({ id: 1, method, params }))
    })
  }
  finally {
    socket.close()
  }
}

/**
 * The session cookie in the browser's own jar (Lighthouse clears the cache and the origin's
 * storage before each visit, not cookies), so that every request of the page carries it, the
 * page's live-changes stream too; none for the sign-in page.
 */
async function signIn(port: number, appUrl: string, cookie: string) {
  await browserCommand(port, 'Storage.clearCookies')
  if (!cookie) return
  const [name, value] = cookie.split(/=(.*)/s) as [string, string]
  await browserCommand(port, 'Storage.setCookies', { cookies: [{ name, value, url: appUrl, httpOnly: true, sameSite: 'Lax' }] })
}

async function audit(port: number, url: string, cookie: string): Promise<Sample> {
  await signIn(port, new URL(url).origin, cookie)
  const result = await lighthouse(url, {
    port,
    output: 'json',
    logLevel: 'error',
    onlyCategories: ['performance'],
  })
  if (!result) throw new Error(`no Lighthouse result for ${url}`)
  const { lhr } = result
  if (args.save) {
    mkdirSync(args.save, { recursive: true })
    writeFileSync(`${args.save}/${new URL(url).pathname.replace(/^\//, '').replace(/\//g, '_') || 'root'}.json`, JSON.stringify(lhr))
  }
  if (lhr.runtimeError) throw new Error(`${url}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`)
  const finalUrl = lhr.finalDisplayedUrl
  if (new URL(finalUrl).pathname !== new URL(url).pathname) throw new Error(`${url} ended at ${finalUrl} (not signed in?)`)
  const numeric = (id: string) => lhr.audits[id]?.numericValue ?? Number.NaN
  const requests = (lhr.audits['network-requests']?.details as { items?: { resourceType?: string, transferSize?: number }[] } | undefined)?.items ?? []
  return {
    score: Math.round((lhr.categories.performance?.score ?? 0) * 100),
    fcp: numeric('first-contentful-paint'),
    lcp: numeric('largest-contentful-paint'),
    tbt: numeric('total-blocking-time'),
    cls: numeric('cumulative-layout-shift'),
    scriptBytes: requests.filter(r => r.resourceType === 'Script').reduce((sum, r) => sum + (r.transferSize ?? 0), 0),
    requests: requests.length,
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`
const ms = (value: number) => `${Math.round(value).toLocaleString('en')} ms`

function table(rows: Row[]): string {
  const lines = [
    '| Page | Path | Performance (min–max) | FCP | LCP | TBT | CLS | Script (compressed) | Requests |',
    '|---|---|---|---|---|---|---|---|---|',
  ]
  for (const { name, path, samples } of rows) {
    const m = (key: keyof Sample) => median(samples.map(s => s[key]))
    const scores = samples.map(s => s.score)
    lines.push(`| ${name} | \`${path.replace(/[0-9a-f-]{36}|[0-9A-Z]{26}/g, '{id}').replace(/\?.*/, '?request={id}')}\` | ${m('score')} (${Math.min(...scores)}–${Math.max(...scores)}) | ${seconds(m('fcp'))} | ${seconds(m('lcp'))} | ${ms(m('tbt'))} | ${m('cls').toFixed(3)} | ${kib(m('scriptBytes'))} | ${m('requests')} |`)
  }
  return lines.join('\n')
}

function writeSection(body: string) {
  const file = 'docs/benchmarks.md'
  const section = `## Pages\n\n${body}\n`
  const text = existsSync(file) ? readFileSync(file, 'utf8') : ''
  const start = text.search(/^## Pages$/m)
  let next: string
  if (start < 0) next = text ? `${text.trimEnd()}\n\n${section}` : section
  else {
    const rest = text.slice(start + 1)
    const end = rest.search(/^## /m)
    next = text.slice(0, start) + section + (end < 0 ? '' : `\n${rest.slice(end)}`)
  }
  writeFileSync(file, next)
  console.info(`Written to ${file} (section "Pages").`)
}

async function main() {
  if (args['no-build']) await serverTemplate()
  else await buildAndPrepare()
  const model = await startScriptedModel(() => ({ text: 'There are twelve tasks.' }))
  const app = await startApp({ LLM_PROVIDER_API_KEY: 'bench-key', LLM_PROVIDER_BASE_URL: model.url, LLM_MODEL: 'scripted-model', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
  const chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
  const rows: Row[] = []
  const started = new Date()
  const loads: number[] = [loadavg()[0]!]
  try {
    const { cookie, pages } = await seed(app)
    const all = [{ name: 'Sign-in', path: '/login' }, ...pages]
    const only = args.only?.split(',')
    const chosen = only ? all.filter(page => only.some(prefix => page.path.startsWith(prefix))) : all
    for (const page of chosen) rows.push({ ...page, samples: [] })
    // one warm-up visit each (the server's first render of a page compiles nothing, but its caches fill)
    for (const row of rows) await fetch(`${app.url}${row.path}`, { headers: row.path === '/login' ? {} : { cookie } })
    // the runs interleave the pages, so that a noisy minute on the machine spreads over all of them
    for (let run = 0; run < runs; run++) {
      for (const row of rows) {
        const sample = await audit(chrome.port, `${app.url}${row.path}`, row.path === '/login' ? '' : cookie)
        row.samples.push(sample)
        console.info(`run ${run + 1}/${runs} ${row.path}: ${sample.score} (FCP ${seconds(sample.fcp)}, LCP ${seconds(sample.lcp)}, TBT ${ms(sample.tbt)}, CLS ${sample.cls.toFixed(3)}, script ${kib(sample.scriptBytes)}, ${sample.requests} requests)`)
      }
      loads.push(loadavg()[0]!)
    }
  }
  finally {
    chrome.kill()
    await app.stop()
    await model.close()
  }
  const result = table(rows)
  console.info(`\n${result}\n`)
  const minutes = Math.round((Date.now() - started.getTime()) / 60_000)
  const about = [
    `\`npm run bench:pages\` (scripts/bench-pages.ts): Lighthouse ${(await import('lighthouse/package.json', { with: { type: 'json' } })).default.version} with its mobile defaults`,
    '(simulated slow 4G, a 4x slower CPU) on the machine\'s Chromium, over every page of the built app',
    `(${outputDir}) on a fresh Postgres database, signed in as the owner of a team with a key, twelve`,
    'tasks and their activity, a webhook endpoint, a chat and an OAuth client at the consent page.',
    `Each figure is the median of ${runs} run${runs > 1 ? 's' : ''} per page (the runs interleave the pages); the`,
    'performance column gives the lowest and highest score seen. Script is the compressed JavaScript',
    'a first visit (empty cache) downloads; requests count every request of the visit.',
    '',
    `Measured ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC in ${minutes} min on a machine with 2 cores shared`,
    `with other work (load average ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} during the run): the scores`,
    'move by a few points from run to run; the bytes and requests do not.',
    '',
    'Targets: performance >= 90 on every page (goal 95), TBT <= 200 ms, LCP <= 2.5 s, CLS <= 0.1,',
    'compressed script on a first visit <= 250 KiB per page, at most 40 requests. The script budget is',
    'also a test (tests/integration/page-budget.test.ts), on the build\'s own files.',
    '',
    result,
  ].join('\n')
  if (!args['no-write']) writeSection(about)
}

await main()
