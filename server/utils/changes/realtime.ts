// The realtime door: the part of Supabase Realtime's Phoenix channel protocol that supabase-js
// needs for `postgres_changes`. A socket authenticates with a team key (the `apikey` query
// parameter supabase-js sends, or a channel's access_token); each joined channel lists bindings
// (event, table, filter) and gets the events of the key's team that match one, with the ids of the
// bindings that matched. Delivery is at most once, as in Supabase: the change feed is the way to
// miss nothing. Broadcast and presence are refused with a reason.
import type { ApiKeyScopes } from '#shared/utils/api-keys'
import { scopeAllows } from '#shared/utils/api-keys'
import { basicType, type TableInfo, useTableRegistry, domainTables } from '../records/table-registry'
import type { StoredEvent } from './feed'
import { follow, type Following } from './hub'
import { admitKeyConnection, type KeyConnection } from './key-watch'
import { hashApiKey, keyLookupSql } from '../credentials/api-keys'
import { revokedKeyOf } from '../credentials/key-cache'
import { useDb } from '../db/database'

/** A Phoenix message: the same fields in both serializers (1.0.0 an object, 2.0.0 an array). */
export interface PhoenixMessage {
  join_ref: string | null
  ref: string | null
  topic: string
  event: string
  payload: unknown
}

export type Serializer = '1.0.0' | '2.0.0'

/** The protocol version the client asked for in `vsn` (supabase-js sends 2.0.0; 1.0.0 when none). */
export function serializerOf(url: string): Serializer {
  return new URL(url, 'http://localhost').searchParams.get('vsn') === '2.0.0' ? '2.0.0' : '1.0.0'
}

export function encodeMessage(serializer: Serializer, message: PhoenixMessage): string {
  return serializer === '2.0.0'
    ? JSON.stringify([message.join_ref, message.ref, message.topic, message.event, message.payload])
    : JSON.stringify(message)
}

/** A client frame as a message; binary frames (2.0.0 broadcast pushes) are read far enough to answer them. */
export function decodeMessage(serializer: Serializer, frame: string | Uint8Array): PhoenixMessage | null {
  if (typeof frame !== 'string') {
    // [kind, join_ref length, ref length, topic length, event length, metadata length, encoding, ...strings]
    if (frame.length < 7) return null
    const text = (from: number, length: number) => new TextDecoder().decode(frame.subarray(from, from + length))
    const [joinLength = 0, refLength = 0, topicLength = 0] = [frame[1], frame[2], frame[3]]
    const joinRef = text(7, joinLength)
    const ref = text(7 + joinLength, refLength)
    const topic = text(7 + joinLength + refLength, topicLength)
    return { join_ref: joinRef || null, ref: ref || null, topic, event: 'broadcast', payload: {} }
  }
  try {
    const parsed: unknown = JSON.parse(frame)
    if (serializer === '2.0.0' && Array.isArray(parsed) && parsed.length === 5) {
      const [joinRef, ref, topic, event, payload] = parsed as [unknown, unknown, unknown, unknown, unknown]
      if (typeof topic !== 'string' || typeof event !== 'string') return null
      return { join_ref: typeof joinRef === 'string' ? joinRef : null, ref: typeof ref === 'string' ? ref : null, topic, event, payload }
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const message = parsed as Record<string, unknown>
      if (typeof message.topic !== 'string' || typeof message.event !== 'string') return null
      return {
        join_ref: typeof message.join_ref === 'string' ? message.join_ref : null,
        ref: typeof message.ref === 'string' ? message.ref : null,
        topic: message.topic,
        event: message.event,
        payload: message.payload,
      }
    }
  }
  catch {
    // not JSON
  }
  return null
}

type ChangeKind = 'INSERT' | 'UPDATE' | 'DELETE'
const filterOperators = ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in'] as const
type FilterOperator = typeof filterOperators[number]

/** One `postgres_changes` binding of a channel, as joined. */
interface Binding {
  id: number
  event: '*' | ChangeKind
  /** null: every table the key may read. */
  table: string | null
  /** The binding as the client sent it, echoed in the join's answer. */
  asSent: Record<string, unknown>
  condition: { column: string, operator: FilterOperator, values: string[] } | null
}

interface Channel {
  topic: string
  joinRef: string | null
  bindings: Binding[]
}

/** What the socket sends through: one encoded frame. */
export interface RealtimePeer {
  send(frame: string): void
  close(code: number, reason: string): void
}

/** The key a socket acts with. */
export interface SocketKey {
  id: string
  team_id: string
  scopes: ApiKeyScopes
}

/** The short type name realtime-js converts values by (format_type's names mapped to udt names). */
function columnType(type: string): string {
  const base = basicType(type)
  const names: Record<string, string> = {
    'integer': 'int4', 'bigint': 'int8', 'smallint': 'int2', 'boolean': 'bool', 'real': 'float4',
    'double precision': 'float8', 'timestamp with time zone': 'timestamptz', 'timestamp without time zone': 'timestamp',
    'character varying': 'varchar', 'time without time zone': 'time',
  }
  return names[base] ?? base
}

/** Parses `column=op.value` of a binding against the table; a message naming what is wrong, else the condition. */
function parseFilter(filter: string, table: TableInfo | undefined): Binding['condition'] | string {
  const match = /^([a-z_][a-z0-9_]*)=([a-z]+)\.(.*)$/s.exec(filter)
  if (!match) return `filter "${filter.slice(0, 80)}" is not <column>=<operator>.<value>`
  const [, column = '', operator = '', value = ''] = match
  if (!(filterOperators as readonly string[]).includes(operator)) return `filter operator "${operator}" is not one of ${filterOperators.join(', ')}`
  if (!table) return 'a filter needs a table'
  if (!table.columns.some(c => c.name === column)) return `filter column "${column}" is not a column of ${table.name}`
  let values = [value]
  if (operator === 'in') {
    const list = /^\((.*)\)$/s.exec(value)
    if (!list) return `filter "${filter.slice(0, 80)}": in takes a list, in.(a,b)`
    values = list[1]!.split(',').map(item => item.trim().replace(/^"(.*)"$/s, '$1'))
  }
  return { column, operator: operator as FilterOperator, values }
}

function compare(actual: unknown, expected: string): number | null {
  if (actual === null || actual === undefined) return null
  if (typeof actual === 'number' && expected.trim() !== '' && Number.isFinite(Number(expected))) return actual - Number(expected)
  const text = typeof actual === 'object' ? JSON.stringify(actual) : String(actual)
  return text < expected ? -1 : text > expected ? 1 : 0
}

function matches(condition: NonNullable<Binding['condition']>, record: Record<string, unknown>): boolean {
  const actual = record[condition.column]
  const operator = condition.operator
  if (operator === 'in') return condition.values.some(value => compare(actual, value) === 0)
  const c = compare(actual, condition.values[0]!)
  if (c === null) return false
  if (operator === 'eq') return c === 0
  if (operator === 'neq') return c !== 0
  if (operator === 'lt') return c < 0
  if (operator === 'lte') return c <= 0
  if (operator === 'gt') return c > 0
  return c >= 0
}

const kindOf: Record<string, ChangeKind> = { created: 'INSERT', updated: 'UPDATE', deleted: 'DELETE' }

/** One realtime connection: its key, its channels and the one follower that feeds them. */
export class RealtimeSocket {
  private channels = new Map<string, Channel>()
  private following: Following | undefined
  private release: (() => void) | undefined
  private connection: KeyConnection | undefined
  private nextBindingId = 1
  private isClosed = false

  constructor(
    private readonly peer: RealtimePeer,
    private readonly serializer: Serializer,
    private key: SocketKey | null,
    private readonly keyError: string | null,
  ) {
    if (key) {
      this.connection = { keyId: key.id, scopes: key.scopes, close: reason => this.shut(reason) }
      this.release = admitKeyConnection(this.connection)
    }
  }

  private push(message: PhoenixMessage) {
    if (!this.isClosed) this.peer.send(encodeMessage(this.serializer, message))
  }

  private reply(message: PhoenixMessage, status: 'ok' | 'error', response: Record<string, unknown>) {
    this.push({ join_ref: message.join_ref, ref: message.ref, topic: message.topic, event: 'phx_reply', payload: { status, response } })
  }

  /** Handles one client frame. */
  async receive(frame: string | Uint8Array): Promise<void> {
    const message = decodeMessage(this.serializer, frame)
    if (!message) return
    if (message.topic === 'phoenix' && message.event === 'heartbeat') return this.reply(message, 'ok', {})
    switch (message.event) {
      case 'phx_join': return this.join(message)
      case 'phx_leave':
        this.channels.delete(message.topic)
        this.reply(message, 'ok', {})
        this.push({ join_ref: message.join_ref, ref: message.ref, topic: message.topic, event: 'phx_close', payload: {} })
        return this.stopIfIdle()
      case 'access_token': return this.accessToken(message)
      case 'broadcast':
      case 'presence':
        return this.reply(message, 'error', { reason: `${message.event} is not available here: this server's realtime carries postgres_changes only` })
      default:
        return this.reply(message, 'error', { reason: `Unknown event "${message.event.slice(0, 40)}"` })
    }
  }

  private async join(message: PhoenixMessage) {
    const refuse = (reason: string) => this.reply(message, 'error', { reason })
    if (!this.key) return refuse(this.keyError ?? 'Send a team API key as the apikey parameter')
    if (!message.topic.startsWith('realtime:')) return refuse('A channel topic starts with realtime:')
    const payload = (message.payload ?? {}) as { config?: { presence?: { enabled?: boolean }, postgres_changes?: unknown, private?: boolean }, access_token?: unknown }
    if (typeof payload.access_token === 'string' && payload.access_token !== this.tokenInUse) {
      const error = await this.adopt(payload.access_token)
      if (error) return refuse(error)
    }
    const config = payload.config ?? {}
    if (config.presence?.enabled) return refuse('presence is not available here: this server\'s realtime carries postgres_changes only')
    const requested = Array.isArray(config.postgres_changes) ? config.postgres_changes as Record<string, unknown>[] : []
    if (!requested.length) return refuse('broadcast is not available here: listen to postgres_changes')
    const registry = await useTableRegistry()
    const bindings: Binding[] = []
    for (const raw of requested) {
      const event = String(raw.event ?? '*').toUpperCase()
      const schema = raw.schema === undefined ? 'public' : String(raw.schema)
      const tableName = raw.table === undefined || raw.table === '*' ? null : String(raw.table)
      const filter = typeof raw.filter === 'string' && raw.filter !== '' ? raw.filter : undefined
      if (!['*', 'INSERT', 'UPDATE', 'DELETE'].includes(event)) return refuse(`event "${event.slice(0, 20)}" is not one of *, INSERT, UPDATE, DELETE`)
      if (schema !== 'public' && schema !== '*') return refuse(`schema "${schema.slice(0, 63)}" is not one this server has (only public)`)
      const table = tableName === null ? undefined : registry.get(tableName)
      if (tableName !== null && !table?.isDomain) return refuse(`No table named "${tableName.slice(0, 63)}" in the public API`)
      if (tableName !== null && !scopeAllows(this.key.scopes, tableName, 'read')) return refuse(`This API key may not read ${tableName} (its scopes lack read access to it)`)
      let condition: Binding['condition'] = null
      if (filter !== undefined) {
        const parsed = parseFilter(filter, table)
        if (typeof parsed === 'string') return refuse(parsed)
        condition = parsed
      }
      bindings.push({ id: this.nextBindingId++, event: event as Binding['event'], table: tableName, condition, asSent: raw })
    }
    this.channels.set(message.topic, { topic: message.topic, joinRef: message.join_ref, bindings })
    try {
      await this.ensureFollowing()
    }
    catch {
      this.channels.delete(message.topic)
      return refuse('The server could not follow the team\'s changes right now; try again')
    }
    this.reply(message, 'ok', {
      // realtime-js matches each answer to its binding by event, schema, table and filter as it sent them
      postgres_changes: bindings.map(b => ({ id: b.id, event: b.asSent.event, schema: b.asSent.schema, table: b.asSent.table, filter: b.asSent.filter })),
    })
    this.push({
      join_ref: message.join_ref, ref: null, topic: message.topic, event: 'system',
      payload: { channel: message.topic.slice('realtime:'.length), extension: 'postgres_changes', message: 'Subscribed to PostgreSQL', status: 'ok' },
    })
  }

  private tokenInUse: string | undefined

  /** Switches the socket to another key of the same team; the reason it may not, else null. */
  private async adopt(token: string): Promise<string | null> {
    const { key: found, refusal } = await verifyRealtimeKey(token)
    if (!found) return refusal ?? 'Unknown API key'
    if (this.key && found.team_id !== this.key.team_id) return 'The access token is a key of another team'
    this.tokenInUse = token
    this.release?.()
    this.key = found
    this.connection = { keyId: found.id, scopes: found.scopes, close: reason => this.shut(reason) }
    this.release = admitKeyConnection(this.connection)
    return null
  }

  private async accessToken(message: PhoenixMessage) {
    const token = (message.payload as { access_token?: unknown } | null)?.access_token
    if (typeof token !== 'string' || token === this.tokenInUse) return
    const error = await this.adopt(token)
    if (error) this.shut(error)
  }

  private async ensureFollowing() {
    if (this.following || !this.key) return
    const teamId = this.key.team_id
    this.following = await follow({
      teamId,
      after: null,
      tables: () => [],
      accepts: stored => this.connection !== undefined && scopeAllows(this.connection.scopes, stored.table, 'read'),
      send: stored => this.deliver(stored),
    })
  }

  private deliver(stored: StoredEvent) {
    const kind = kindOf[stored.event.type.slice(stored.event.type.lastIndexOf('.') + 1)]
    if (!kind) return
    const { previous, ...record } = stored.event.data
    const oldRecord = kind === 'UPDATE' ? { ...record, ...previous } : record
    const subject = kind === 'DELETE' ? oldRecord : record
    let dataJson = payloadJson.get(stored)
    for (const channel of this.channels.values()) {
      const ids = channel.bindings
        .filter(b => (b.event === '*' || b.event === kind) && (b.table === null || b.table === stored.table)
          && (!b.condition || matches(b.condition, subject)))
        .map(b => b.id)
      if (!ids.length) continue
      if (dataJson === undefined) {
        dataJson = JSON.stringify({
          schema: 'public',
          table: stored.table,
          commit_timestamp: stored.event.created_at,
          type: kind,
          columns: columnsOf(stored.table),
          ...(kind !== 'DELETE' ? { record } : {}),
          ...(kind !== 'INSERT' ? { old_record: oldRecord } : {}),
          errors: null,
        })
        payloadJson.set(stored, dataJson)
      }
      if (this.isClosed) return
      // the payload's data is the same for every socket: serialised once, put in each frame as it is
      const payload = `{"ids":${JSON.stringify(ids)},"data":${dataJson}}`
      const joinRef = JSON.stringify(channel.joinRef)
      const topic = JSON.stringify(channel.topic)
      this.peer.send(this.serializer === '2.0.0'
        ? `[${joinRef},null,${topic},"postgres_changes",${payload}]`
        : `{"join_ref":${joinRef},"ref":null,"topic":${topic},"event":"postgres_changes","payload":${payload}}`)
    }
  }

  private stopIfIdle() {
    if (this.channels.size) return
    this.following?.stop()
    this.following = undefined
  }

  /** Tells every channel why, and closes the socket (a revoked key). */
  shut(reason: string) {
    for (const channel of this.channels.values()) {
      this.push({ join_ref: channel.joinRef, ref: null, topic: channel.topic, event: 'system', payload: { channel: channel.topic.slice('realtime:'.length), extension: 'postgres_changes', message: reason, status: 'error' } })
    }
    this.closed()
    this.peer.close(4001, reason.slice(0, 120))
  }

  /** The socket is gone: stop following and release the key's place. */
  closed() {
    if (this.isClosed) return
    this.isClosed = true
    this.following?.stop()
    this.following = undefined
    this.release?.()
    this.channels.clear()
  }
}

/** The domain tables' columns, kept from the registry for the payloads' `columns`. */
const tableColumns = new Map<string, TableInfo['columns']>()
/** Each event's `data` JSON, made once for all the sockets it goes to. */
const payloadJson = new WeakMap<StoredEvent, string>()

function columnsOf(table: string) {
  return (tableColumns.get(table) ?? []).map(c => ({ name: c.name, type: columnType(c.type) }))
}

/** Loads the registry's columns once (the registry itself is read at start). */
export async function loadRealtimeColumns(): Promise<void> {
  if (tableColumns.size) return
  for (const table of await domainTables()) tableColumns.set(table.name, table.columns)
}

/** A socket's key: valid (`key`), or why not (`refusal`), with the key's id and team when it is known (revoked, expired). */
export interface RealtimeKeyCheck {
  key?: SocketKey
  refusal?: string
  known?: { id: string, team_id: string }
}

/** The key of a token when it is valid, else why not (unknown, revoked, expired). */
export async function verifyRealtimeKey(token: string): Promise<RealtimeKeyCheck> {
  if (!/^[A-Za-z0-9_-]{20,200}$/.test(token)) return { refusal: 'Unknown API key' }
  const hash = hashApiKey(token)
  const revoked = revokedKeyOf(hash)
  if (revoked) return { refusal: 'This API key has been revoked', known: revoked }
  const db = await useDb()
  const { rows } = await db.query<{ id: string, team_id: string, scopes: ApiKeyScopes, revoked: boolean, expired: boolean }>(keyLookupSql, [hash], { prepare: true })
  const found = rows[0]
  if (!found) return { refusal: 'Unknown API key' }
  const known = { id: found.id, team_id: found.team_id }
  if (found.revoked) return { refusal: 'This API key has been revoked', known }
  if (found.expired) return { refusal: 'This API key has expired', known }
  return { key: { id: found.id, team_id: found.team_id, scopes: found.scopes }, known }
}
