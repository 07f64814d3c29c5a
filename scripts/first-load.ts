// npm run bench:first-load — the bytes a browser downloads on a first visit (empty cache) to the
// sign-in page and to the signed-in overview, as sent (compressed) and as they would be sent without
// compression (the same visit with `Accept-Encoding: identity`). Real Chromium, the built app on PGlite.
import { chromium, type Page } from '@playwright/test'

const { startApp } = await import('./harness/app')
const { default: buildIfStale } = await import('./harness/build')
const { signUp } = await import('./harness/http')

interface Load {
  requests: number
  bytes: number
  scriptBytes: number
}

async function measure(page: Page, url: string): Promise<Load> {
  const load: Load = { requests: 0, bytes: 0, scriptBytes: 0 }
  const pending: Promise<void>[] = []
  page.on('requestfinished', (request) => {
    pending.push(request.sizes().then((sizes) => {
      load.requests++
      load.bytes += sizes.responseBodySize + sizes.responseHeadersSize
      if (request.resourceType() === 'script') load.scriptBytes += sizes.responseBodySize
    }))
  })
  await page.goto(url, { waitUntil: 'networkidle' })
  await Promise.all(pending)
  return load
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`

async function main() {
  await buildIfStale()
  const app = await startApp()
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' })
  try {
    const user = await signUp(app)
    await user.post('/api/teams', { name: 'First load' })
    const [name, value] = user.cookie.split('=') as [string, string]
    for (const path of ['/login', '/app']) {
      const results: Record<string, Load> = {}
      for (const encoding of ['identity', 'gzip, deflate, br']) {
        const context = await browser.newContext({ extraHTTPHeaders: { 'accept-encoding': encoding } })
        if (path !== '/login') await context.addCookies([{ name, value, url: app.url }])
        results[encoding] = await measure(await context.newPage(), `${app.url}${path}`)
        await context.close()
      }
      const plain = results.identity!
      const compressed = results['gzip, deflate, br']!
      console.info(`${path}: ${compressed.requests} requests; uncompressed ${kb(plain.bytes)} (scripts ${kb(plain.scriptBytes)}), compressed ${kb(compressed.bytes)} (scripts ${kb(compressed.scriptBytes)}), ${(plain.bytes / compressed.bytes).toFixed(1)}x smaller`)
    }
  }
  finally {
    await browser.close()
    await app.stop()
  }
}

await main()
