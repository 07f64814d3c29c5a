// The path of an API log entry, up to the buffer: a request of /api/v1, /rest/v1 or /mcp gets its
// id when it arrives (answered as Request-Id), learns its credential when the key is looked up,
// and when its response is over becomes one entry in this instance's bounded buffer. Nothing here
// waits on the database; writer.ts empties the buffer.
import { ServerResponse } from 'node:http'
import type { H3Event } from 'h3'
import type { ApiLogEntry, ApiLogSource } from '#shared/utils/api-log'
import { newRequestId } from './request-id'
import { setting } from '../settings'
import { logger } from '../log/logger'

const log = logger('api-log')

/** Whose request it is: a team's key or, for connections made by OAuth, a grant. */
export interface ApiLogCredential {
  teamId: string
  apiKeyId?: string | null
  grantId?: string | null
}

/** What this instance knows of a request in flight. */
export interface ApiRequestState {
  id: string
  /** When it arrived (ms since the epoch); the id's time. */
  at: number
  /** performance.now() when it arrived. */
  started: number
  source: ApiLogSource
  /** performance.now() when the answer's head was written. */
  firstByteAt: number
  responseBytes: number
  credential?: ApiLogCredential
  /** Whether the credential the request sent was looked up (and found unknown when `credential` is unset). */
  isCredentialLookedUp?: boolean
  errorCode?: string
  mcpMethod?: string
  mcpTool?: string
}

/** One entry, as written to public.api_log_entries: the fields an entry is read with, its time in ms and its team. */
export type ApiLogRecord = Omit<ApiLogEntry, 'at' | 'api_key_name'> & { at: number, team_id: string }

declare module 'h3' {
  interface H3EventContext {
    apiRequest?: ApiRequestState
  }
}

/** The log's source for a request URL, or undefined when the path is not one the log covers. */
export function apiLogSource(url: string): ApiLogSource | undefined {
  if (url.startsWith('/api/v1/') || url === '/api/v1' || url.startsWith('/api/v1?')) return 'api'
  if (url.startsWith('/rest/v1/') || url === '/rest/v1' || url.startsWith('/rest/v1?')) return 'rest'
  if (url === '/mcp' || url.startsWith('/mcp?') || url.startsWith('/mcp/')) return 'mcp'
  if (url.startsWith('/realtime/v1/')) return 'realtime'
  return undefined
}

let isRecording: boolean | undefined

/** Whether entries are recorded (API_LOG=off turns recording off; Request-Id stays); read once. */
export function isRecordingApiLog(): boolean {
  isRecording ??= setting('apiLog') !== 'off'
  return isRecording
}

type Sink = (record: ApiLogRecord) => void
type Unknown = () => void
/** The team (and key or grant) of a credential a request sent, when it is one the app knows. */
export type CredentialResolver = (token: string) => Promise<ApiLogCredential | undefined>
const sinks: { record?: Sink, unknown?: Unknown, resolve?: CredentialResolver } = {}

/**
 * How a request refused before its credential was read (413, 414, 415, 431, 405, ...) finds its
 * team: the credential it sent is looked up once its answer is over, off the request's path.
 */
export function setApiLogCredentialResolver(resolve: CredentialResolver): void {
  sinks.resolve = resolve
}

/** Where finished requests go (writer.ts registers its buffer, once recording starts). */
export function setApiLogSink(record: Sink, unknown: Unknown): void {
  sinks.record = record
  sinks.unknown = unknown
  hookResponses()
}

/** The requests in flight that are recorded, by their response (read by the response's methods below). */
const recorded = new WeakMap<ServerResponse, H3Event>()

const chunkBytes = (chunk: unknown) => typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.byteLength : 0
/** `end(chunk)` or `end(chunk, callback)`: a string chunk is UTF-8. */
const isUtf8End = (rest: unknown[]) => rest.length === 0 || typeof rest[0] === 'function'

let isHooked = false

/**
 * Hooks the answer's methods once, on the prototype of every response: the time of a recorded
 * request's first byte and the count of its answer's bytes. (Wrapping each response's own methods
 * made three closures and three own properties per request, which cost a read 0.016 to 0.022 ms
 * of CPU: bench:api, side by side.) A string ended before the head is sent is encoded here, once: its
 * length is then known, and Node, given bytes, need not measure the string for its Content-Length.
 */
function hookResponses(): void {
  if (isHooked) return
  isHooked = true
  const prototype = ServerResponse.prototype
  const { writeHead, write, end } = prototype as unknown as Record<'writeHead' | 'write' | 'end', (...args: unknown[]) => unknown>
  const stateOf = (response: ServerResponse) => recorded.get(response)?.context.apiRequest
  Object.assign(prototype, {
    writeHead(this: ServerResponse, ...args: unknown[]) {
      const state = stateOf(this)
      if (state && !state.firstByteAt) state.firstByteAt = performance.now()
      return writeHead.apply(this, args)
    },
    write(this: ServerResponse, ...args: unknown[]) {
      const state = stateOf(this)
      if (state) state.responseBytes += chunkBytes(args[0])
      return write.apply(this, args)
    },
    end(this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      const state = stateOf(this)
      if (state) {
        if (typeof chunk === 'string' && !this.headersSent && isUtf8End(rest)) chunk = Buffer.from(chunk)
        state.responseBytes += chunkBytes(chunk)
      }
      return end.call(this, chunk, ...rest)
    },
  })
}

/** The one listener of every recorded response's `close`: its entry, once the response is over. */
function finishOnClose(this: ServerResponse): void {
  const event = recorded.get(this)
  if (!event) return
  recorded.delete(this)
  finishApiRequest(event, event.context.apiRequest!)
}

/**
 * Starts a request of the log's routes: its id in `Request-Id`, and (when recording) the count
 * of its answer's bytes and the time of its first byte. Once per request.
 */
export function beginApiRequest(event: H3Event, source: ApiLogSource): void {
  if (event.context.apiRequest) return
  const { id, at } = newRequestId()
  const state: ApiRequestState = { id, at, started: performance.now(), source, firstByteAt: 0, responseBytes: 0 }
  event.context.apiRequest = state
  const response = event.node.res
  response.setHeader('request-id', state.id)
  if (!sinks.record || !isRecordingApiLog()) return
  recorded.set(response, event)
  response.on('close', finishOnClose)
}

/** Starts a request that took the public API's short way (its source from its path). */
export function beginPublicApiRequest(event: H3Event): void {
  const source = apiLogSource(event.node.req.url ?? '/')
  if (source) beginApiRequest(event, source)
}

/** The request's credential, once known (revoked and expired ones too): only then is it recorded. */
export function noteApiCredential(event: H3Event, credential: ApiLogCredential): void {
  const state = event.context.apiRequest
  if (state) state.credential = credential
}

/** The request's credential was looked up and is no credential the app knows: nothing to look up again. */
export function noteUnknownApiCredential(event: H3Event): void {
  const state = event.context.apiRequest
  if (state) state.isCredentialLookedUp = true
}

/**
 * The credential a request sends: the bearer token of `Authorization`, else the `apikey` header
 * (PostgREST clients such as supabase-js send the key in both). `isConflicting` when both are sent
 * and name different credentials.
 */
export function sentCredential(authorization: string | undefined, apikey: string | undefined): { token: string | undefined, isConflicting: boolean } {
  const key = apikey?.trim() || undefined
  const bearer = authorization ? /^Bearer +(\S+) *$/i.exec(authorization)?.[1] : undefined
  return { token: authorization ? bearer : key, isConflicting: Boolean(bearer && key && bearer !== key) }
}

/** The JSON-RPC method of an MCP request, and the tool of a tools/call. */
export function noteMcpCall(event: H3Event, message: unknown): void {
  const state = event.context.apiRequest
  if (!state || !message || typeof message !== 'object') return
  const call = (Array.isArray(message) ? message[0] : message) as { method?: unknown, params?: { name?: unknown } } | undefined
  if (typeof call?.method === 'string') state.mcpMethod = call.method.slice(0, 100)
  if (call?.method === 'tools/call' && typeof call.params?.name === 'string') state.mcpTool = call.params.name.slice(0, 100)
}

/** The code of an error answered inside a 200 (an MCP tool's, a JSON-RPC error): the entry's error_code. */
export function noteApiErrorCode(event: H3Event, code: string): void {
  const state = event.context.apiRequest
  if (state) state.errorCode ??= code
}

/** An error body with the request's id (`request_id`); its code becomes the entry's error_code. */
export function withRequestId<T extends { code: string }>(event: H3Event, body: T): T & { request_id?: string } {
  const state = event.context.apiRequest
  if (!state) return body
  state.errorCode = body.code
  return { ...body, request_id: state.id }
}

/** The request id of a request of the log's routes. */
export function requestIdOf(event: H3Event): string | undefined {
  return event.context.apiRequest?.id
}

// parameters that may carry a credential are never kept, whatever a client puts in its URL
const secretParameters = /(^|&)((?:apikey|api_key|access_token|refresh_token|token|key|password|secret)=)[^&]*/gi
const maxQueryLength = 1024

function loggedQuery(url: string): string | null {
  const start = url.indexOf('?')
  if (start < 0 || start === url.length - 1) return null
  return url.slice(start + 1).replace(secretParameters, '$1$2[redacted]').slice(0, maxQueryLength)
}

const printable = /^[\x20-\x7E]{1,200}$/

function header(event: H3Event, name: string): string | undefined {
  const value = event.node.req.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}

/** A finished request's entry, its team and credential not yet known. */
type UnownedRecord = Omit<ApiLogRecord, 'team_id' | 'api_key_id' | 'grant_id'>

/** The entry in its credential's team, now; or once the credential it sent is looked up; or none (an unknown one). */
function recordFor(credential: ApiLogCredential | undefined, token: string | undefined, entry: UnownedRecord): void {
  const record = (owner: ApiLogCredential) => sinks.record?.({
    ...entry, team_id: owner.teamId, api_key_id: owner.apiKeyId ?? null, grant_id: owner.grantId ?? null,
  })
  if (credential) return void record(credential)
  const resolve = sinks.resolve
  if (!token || !resolve) return void sinks.unknown?.()
  resolve(token).then(
    found => found ? record(found) : sinks.unknown?.(),
    (error: Error) => {
      log.error('Could not look up the credential of a refused request', { error })
      sinks.unknown?.()
    },
  )
}

function finishApiRequest(event: H3Event, state: ApiRequestState): void {
  const credential = state.credential
  // a request refused before its credential was read is looked up here (unless it was, and is unknown)
  const token = credential || state.isCredentialLookedUp ? undefined : sentCredential(header(event, 'authorization'), header(event, 'apikey'))
  if (!credential && !token?.token) {
    sinks.unknown?.()
    return
  }
  const url = event.node.req.url ?? '/'
  const query = url.indexOf('?')
  const clientRequestId = header(event, 'x-request-id')
  const table = event.context.params?.table
  const length = Number(header(event, 'content-length'))
  // both headers naming different credentials: the request is no one credential's
  recordFor(credential, token?.isConflicting ? undefined : token?.token, {
    id: state.id,
    at: state.at,
    source: state.source,
    method: event.method,
    path: (query < 0 ? url : url.slice(0, query)).slice(0, 2048),
    // a path that names no table of the API (PGRST205, answered 404) has none
    table: table && table.length <= 63 && state.errorCode !== 'PGRST205' ? table : null,
    query: loggedQuery(url),
    status: event.node.res.statusCode,
    duration_ms: Math.round(((state.firstByteAt || performance.now()) - state.started) * 100) / 100,
    error_code: state.errorCode ?? null,
    mcp_method: state.mcpMethod ?? null,
    mcp_tool: state.mcpTool ?? null,
    request_bytes: Number.isFinite(length) && length > 0 ? length : event._requestBody ? (event._requestBody as Uint8Array).byteLength : 0,
    response_bytes: state.responseBytes,
    ip: getRequestIP(event) ?? null,
    user_agent: header(event, 'user-agent')?.slice(0, 256) ?? null,
    client_request_id: clientRequestId && printable.test(clientRequestId) ? clientRequestId : null,
  })
}

/** What the log keeps of a realtime socket's opening (the upgrade request), once its key is read. */
export interface SocketOpening {
  id: string
  at: number
  started: number
  url: string
  headers: Headers
  ip: string | undefined
  /** The key's id and team when it is known (revoked and expired ones too); none: counted only. */
  credential: ApiLogCredential | undefined
  /** Why the key was refused, when it was: the entry's 401. */
  refusal: string | undefined
}

/**
 * Records the opening of a realtime socket: one entry per socket, status 101 (switched to the
 * socket) or 401 when its key was refused (the socket stays open to say why, as realtime-js expects).
 */
export function recordSocketOpening(opening: SocketOpening): void {
  if (!isRecordingApiLog()) return
  if (!opening.credential) {
    sinks.unknown?.()
    return
  }
  const query = opening.url.indexOf('?')
  const clientRequestId = opening.headers.get('x-request-id') ?? undefined
  sinks.record?.({
    id: opening.id,
    at: opening.at,
    team_id: opening.credential.teamId,
    api_key_id: opening.credential.apiKeyId ?? null,
    grant_id: opening.credential.grantId ?? null,
    source: 'realtime',
    method: 'GET',
    path: (query < 0 ? opening.url : opening.url.slice(0, query)).slice(0, 2048),
    table: null,
    query: loggedQuery(opening.url),
    status: opening.refusal ? 401 : 101,
    duration_ms: Math.round((performance.now() - opening.started) * 100) / 100,
    error_code: opening.refusal ? 'invalid_api_key' : null,
    mcp_method: null,
    mcp_tool: null,
    request_bytes: 0,
    response_bytes: 0,
    ip: opening.ip ?? null,
    user_agent: opening.headers.get('user-agent')?.slice(0, 256) ?? null,
    client_request_id: clientRequestId && printable.test(clientRequestId) ? clientRequestId : null,
  })
}

/** A request Node refused before the app saw it (a URL or headers too large), as far as its packet tells. */
export interface RefusedPacket {
  id: string
  at: number
  method: string
  /** The request's URL (path and query), as far as it came. */
  url: string
  /** The headers found in the packet, by lower-case name. */
  headers: Record<string, string>
  status: number
  errorCode: string
  ip: string | undefined
}

/**
 * Records a request Node refused before any app code ran (414, 431), when the packet it handed
 * over carries a credential the app knows (a credential sent after the part that overflowed is
 * not in it: that request is counted only).
 */
export function recordRefusedPacket(packet: RefusedPacket): void {
  const source = apiLogSource(packet.url)
  if (!source || !isRecordingApiLog() || !sinks.record) return
  const { token, isConflicting } = sentCredential(packet.headers.authorization, packet.headers.apikey)
  const query = packet.url.indexOf('?')
  const clientRequestId = packet.headers['x-request-id']
  recordFor(undefined, isConflicting ? undefined : token, {
    id: packet.id,
    at: packet.at,
    source,
    method: packet.method,
    path: (query < 0 ? packet.url : packet.url.slice(0, query)).slice(0, 2048),
    table: null,
    query: loggedQuery(packet.url),
    status: packet.status,
    duration_ms: 0,
    error_code: packet.errorCode,
    mcp_method: null,
    mcp_tool: null,
    request_bytes: 0,
    response_bytes: 0,
    ip: packet.ip ?? null,
    user_agent: packet.headers['user-agent']?.slice(0, 256) ?? null,
    client_request_id: clientRequestId && printable.test(clientRequestId) ? clientRequestId : null,
  })
}
