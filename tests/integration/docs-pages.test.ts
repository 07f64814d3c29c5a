import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'

// The documentation the app links to is served: the agents guide the protected resource metadata
// names, and the API reference with the operations of the app's own OpenAPI document.
let app: TestApp

beforeAll(async () => {
  app = await startApp()
})
afterAll(() => app?.stop())

async function page(path: string) {
  const response = await fetch(`${app.url}${path}`)
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() }
}

describe('documentation pages', () => {
  it('serve the agents guide at the address the protected resource metadata names', async () => {
    const metadata = await (await fetch(`${app.url}/.well-known/oauth-protected-resource/mcp`)).json()
    expect(metadata.resource_documentation).toBe(`${app.url}/docs/agents`)
    const guide = await page(new URL(metadata.resource_documentation).pathname)
    expect(guide.status).toBe(200)
    expect(guide.type).toMatch(/^text\/html/)
    expect(guide.text).toMatch(/<html\s+lang="en"/)
    expect(guide.text).toContain('<title>Agents and automations · Team Workspace</title>')
    expect(guide.text).toContain('<h1 id="agents-and-automations">Agents and automations</h1>')
    expect(guide.text).toContain('<h2 id="connecting-an-mcp-client">Connecting an MCP client</h2>')
    expect(guide.text).toContain('&quot;Authorization&quot;: &quot;Bearer &lt;the API key&gt;&quot;')
    // signed out: the docs are public
    expect(guide.text).not.toContain('Sign in to your workspace')
  })

  it('serve the API reference with every operation of the OpenAPI document', async () => {
    const reference = await page('/docs/api')
    expect(reference.status).toBe(200)
    expect(reference.text).toContain('<h3 id="one-code-per-problem">One code per problem</h3>')
    // the docs' links between files lead to their pages
    expect(reference.text).toContain('<a href="/docs/agents">agents.md</a>')
    const openapi = await (await fetch(`${app.url}/api/v1/openapi.json`)).json()
    const operations = Object.entries(openapi.paths as Record<string, Record<string, { summary: string }>>)
      .flatMap(([path, methods]) => Object.entries(methods).filter(([method]) => method !== 'parameters').map(([method, operation]) => ({ path, method, operation })))
    expect(operations.length).toBeGreaterThan(10)
    for (const { path, method } of operations) {
      expect(reference.text, `${method} ${path}`).toContain(`<tr><td><code>${method.toUpperCase()}</code></td><td><code>${path}</code></td>`)
    }
  })

  it('answers 404 for a page that does not exist', async () => {
    for (const name of ['nope', '..%2FREADME', 'constructor', '__proto__']) {
      expect((await page(`/docs/${name}`)).status, name).toBe(404)
      expect((await page(`/api/docs/${name}`)).status, name).toBe(404)
    }
  })
})
