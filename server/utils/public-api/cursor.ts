import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'
import type { ColumnInfo, TableInfo } from '../records/table-registry'
import { badRequest as bad } from './errors'
import type { RecordQuery } from './query'
import { setting } from '../settings'

let derivedKey: { secret: string, key: Buffer } | undefined
/** The key that signs cursors, derived from the app secret (once per secret: HKDF is not free). */
function cursorKey(): Buffer {
  const secret = setting('appSecret') || useRuntimeConfig().session.password || process.env.NUXT_SESSION_PASSWORD
  if (!secret) throw new Error('Neither APP_SECRET nor a session password is set')
  if (derivedKey?.secret !== secret) derivedKey = { secret, key: Buffer.from(hkdfSync('sha256', secret, 'team-workspace', 'record-cursor', 32)) }
  return derivedKey.key
}

/** A signed, opaque cursor of the last row's order values and id, bound to the table and order. */
export function encodeCursor(scope: string, values: unknown[]): string {
  const payload = Buffer.from(JSON.stringify(values)).toString('base64url')
  const signature = createHmac('sha256', cursorKey()).update(`${scope}.${payload}`).digest('base64url')
  return `${payload}.${signature}`
}

export function decodeCursor(scope: string, cursor: string): unknown[] {
  const [payload, signature] = cursor.split('.')
  if (!payload || !signature) throw bad('cursor: is malformed')
  const expected = createHmac('sha256', cursorKey()).update(`${scope}.${payload}`).digest()
  const given = Buffer.from(signature, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad('cursor: is not valid for this list (forged, or made for other filters or order)')
  const values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown
  if (!Array.isArray(values)) throw bad('cursor: is malformed')
  return values
}

/** What a cursor is bound to: the table, the order and the filters. */
export function cursorScope(table: TableInfo, query: Pick<RecordQuery, 'order' | 'filters'>): string {
  const filters = JSON.stringify(query.filters, (key, value: unknown) => key === 'column' ? (value as ColumnInfo).name : value)
  return `${table.name}:${JSON.stringify(query.order.map(o => [o.column.name, o.direction, o.nulls]))}:${filters}`
}
