import { Marked } from 'marked'
import type { DocsPage } from '#shared/types/api'
import { openApiDocument } from '~~/server/utils/public-api/openapi'

// GET /api/docs/{page}: a page of the project's docs (docs/*.md, bundled as server assets) as HTML,
// for the documentation pages (/docs/agents, /docs/api), so that the links the app hands out
// resolve: the protected resource metadata's `resource_documentation` (/docs/agents) and the API
// reference, which ends with the operations of the app's own OpenAPI document.

const pages: Record<string, { file: string, title: string }> = {
  agents: { file: 'agents.md', title: 'Agents and automations' },
  api: { file: 'api.md', title: 'HTTP API reference' },
  webhooks: { file: 'webhooks.md', title: 'Webhooks' },
  security: { file: 'security.md', title: 'Security' },
  architecture: { file: 'architecture.md', title: 'Architecture' },
}

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' }
const escapeHtml = (value: string) => value.replace(/[&<>"']/g, char => entities[char]!)

/** A heading's anchor, as GitHub makes it (the docs link to `#exact-and-bounded`). */
const slug = (html: string) => html.toLowerCase().replace(/<[^>]+>/g, '').replace(/&[a-z]+;|&#\d+;/g, '').replace(/[^\w\- ]/g, '').trim().replace(/ /g, '-')

const markdown = new Marked({
  gfm: true,
  async: false,
  renderer: {
    heading({ tokens, depth }) {
      const text = this.parser.parseInline(tokens)
      return `<h${depth} id="${slug(text)}">${text}</h${depth}>\n`
    },
    // the docs link to each other as files (agents.md#oauth): here, to their pages
    link({ href, tokens }) {
      const label = this.parser.parseInline(tokens)
      const doc = /^([a-z-]+)\.md(#[\w-]*)?$/.exec(href)
      if (doc && pages[doc[1]!]) return `<a href="/docs/${doc[1]}${doc[2] ?? ''}">${label}</a>`
      if (/^(https?:|mailto:|#)/i.test(href)) return `<a href="${escapeHtml(href)}">${label}</a>`
      return label
    },
    // a code block scrolls sideways: focusable, so that the keyboard can scroll it
    code: ({ text }) => `<pre tabindex="0"><code>${escapeHtml(text)}</code></pre>\n`,
  },
})

type Operation = { summary?: string }

/** The operations of the OpenAPI document as a section: method, path and what it does. */
function operationsSection(document: { paths?: Record<string, Record<string, Operation>> }): string {
  const rows = Object.entries(document.paths ?? {}).flatMap(([path, methods]) => Object.entries(methods)
    .filter(([method]) => ['get', 'post', 'patch', 'put', 'delete', 'head'].includes(method))
    .map(([method, operation]) => `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(operation.summary ?? '')}</td></tr>`))
  return `<h2 id="operations">Operations</h2>
<p>Every operation of the public API, from its OpenAPI document (<a href="/api/v1/openapi.json">/api/v1/openapi.json</a>; with a key, only the operations that key may call).</p>
<table><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">What it does</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`
}

export default defineEventHandler(async (event): Promise<DocsPage> => {
  const name = getRouterParam(event, 'page') ?? ''
  const page = Object.hasOwn(pages, name) ? pages[name] : undefined
  const text = page && await useStorage('assets:docs').getItem<string>(page.file)
  if (!page || typeof text !== 'string') throw createError({ statusCode: 404, statusMessage: 'No documentation page of that name' })
  let html = markdown.parse(text) as string
  if (name === 'api') html += operationsSection(openApiDocument(await useTableRegistry(), publicOrigin(event)) as Parameters<typeof operationsSection>[0])
  setResponseHeader(event, 'cache-control', 'public, max-age=300')
  return { name, title: page.title, html, pages: Object.entries(pages).map(([key, { title }]) => ({ name: key, title })) }
})
