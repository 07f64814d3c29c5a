import { createServer, type IncomingMessage, type Server } from 'node:http'

/** A message of a Chat Completions request, as the app sends it. */
export interface CompletionMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content?: string | null | { type: string, text?: string }[]
  tool_calls?: { id: string, type: 'function', function: { name: string, arguments: string } }[]
  tool_call_id?: string
}

export interface CompletionRequest {
  model: string
  messages: CompletionMessage[]
  tools?: { type: 'function', function: { name: string, description?: string, parameters?: unknown } }[]
  stream?: boolean
}

/** Tokens a scripted reply reports (the last chunk's `usage`); by default 100 in, 10 out. */
export interface ScriptedUsage {
  input: number
  output: number
}

export const defaultScriptedUsage: ScriptedUsage = { input: 100, output: 10 }

/** What the scripted model answers: text (streamed in chunks), or tool calls. */
export type ScriptedReply
  = | { text: string, chunkDelayMs?: number, usage?: ScriptedUsage }
    | { toolCalls: { name: string, input: Record<string, unknown> }[], usage?: ScriptedUsage }

export type Script = (request: CompletionRequest) => ScriptedReply

export interface ScriptedModelServer {
  /** The base URL for LLM_PROVIDER_BASE_URL, e.g. http://127.0.0.1:41234/v1 */
  url: string
  /** A SearXNG-compatible search endpoint for CHAT_WEB_SEARCH_URL */
  searchUrl: string
  /** Every request received, in order. */
  requests: CompletionRequest[]
  /** Queues replies: each request takes the next one; with none queued, `fallback` answers. */
  enqueue(...replies: (ScriptedReply | Script)[]): void
  fallback: Script
  close(): Promise<void>
}

/** The text of a message's content, whatever its shape. */
export function contentText(message: CompletionMessage | undefined): string {
  if (!message?.content) return ''
  return typeof message.content === 'string' ? message.content : message.content.map(part => part.text ?? '').join('')
}

/** The last tool result the model was given, parsed. */
export function lastToolResult(request: CompletionRequest): any {
  const message = request.messages.findLast(m => m.role === 'tool')
  return message ? JSON.parse(contentText(message)) : undefined
}

async function readJson(request: IncomingMessage): Promise<CompletionRequest> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

let callCounter = 0

/** The OpenAI Chat Completions streaming chunks of a reply. */
function replyChunks(reply: ScriptedReply, model: string): { chunk: unknown, delayMs: number }[] {
  const base = { id: `chatcmpl-${++callCounter}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model }
  const chunk = (delta: unknown, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })
  const usage = reply.usage ?? defaultScriptedUsage
  // sent last, as OpenAI does when asked for stream_options.include_usage
  const usageChunk = { chunk: { ...base, choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output } }, delayMs: 0 }
  if ('text' in reply) {
    const words = reply.text.split(/(?<= )/)
    return [
      { chunk: chunk({ role: 'assistant', content: '' }), delayMs: 0 },
      ...words.map(word => ({ chunk: chunk({ content: word }), delayMs: reply.chunkDelayMs ?? 0 })),
      { chunk: chunk({}, 'stop'), delayMs: 0 },
      usageChunk,
    ]
  }
  return [
    { chunk: chunk({ role: 'assistant', content: null }), delayMs: 0 },
    ...reply.toolCalls.map((call, index) => ({
      chunk: chunk({ tool_calls: [{ index, id: `call_${++callCounter}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.input) } }] }),
      delayMs: 0,
    })),
    { chunk: chunk({}, 'tool_calls'), delayMs: 0 },
    usageChunk,
  ]
}

/**
 * A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, streaming server-sent events,
 * so that the app runs its real provider code against a model whose answers a test decides.
 */
export async function startScriptedModel(fallback: Script = () => ({ text: 'OK.' })): Promise<ScriptedModelServer> {
  const queue: (ScriptedReply | Script)[] = []
  const requests: CompletionRequest[] = []
  const state = { fallback }
  const server: Server = createServer(async (req, res) => {
    // a SearXNG-compatible search endpoint, for CHAT_WEB_SEARCH_URL
    if (req.method === 'GET' && req.url?.startsWith('/search?')) {
      const query = new URL(req.url, 'http://localhost').searchParams.get('q')
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        query,
        results: [{ title: `About ${query}`, url: 'https://example.com/result', content: `What the web says about ${query}.` }],
      }))
      return
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }))
      return
    }
    const body = await readJson(req)
    requests.push(body)
    const next = queue.shift() ?? state.fallback
    const reply = typeof next === 'function' ? next(body) : next
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'connection': 'keep-alive' })
    for (const { chunk, delayMs } of replyChunks(reply, body.model)) {
      if (delayMs) await new Promise(resolve => setTimeout(resolve, delayMs))
      if (res.destroyed) return
      res.write(`data: ${JSON.stringify(chunk)}\n\n`)
    }
    res.end('data: [DONE]\n\n')
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/v1`,
    searchUrl: `http://127.0.0.1:${port}/search`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    get fallback() {
      return state.fallback
    },
    set fallback(script: Script) {
      state.fallback = script
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
