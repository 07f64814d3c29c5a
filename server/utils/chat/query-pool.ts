import { createHmac } from 'node:crypto'
import pg from 'pg'
import type { Database } from '../db/db-drivers'
import type { ChatQueryTarget } from './query-runner'
import { setting } from '../settings'
import { useDb } from '../db/database'
import { logger } from '../log/logger'

const log = logger('chat')

const gatewayRole = 'chat_gateway'

/** The password of chat_gateway, derived from the app secret so that every app instance agrees. */
function gatewayPassword(secret: string): string {
  return createHmac('sha256', secret).update('chat_gateway password').digest('hex')
}

/** The app's DATABASE_URL with chat_gateway's name and password. */
function gatewayUrl(databaseUrl: string, password: string): string {
  const url = new URL(databaseUrl)
  url.username = gatewayRole
  url.password = password
  return url.toString()
}

async function openChatPool(db: Database): Promise<pg.Pool> {
  let url = setting('chatDatabaseUrl')
  if (!url) {
    const password = gatewayPassword(setting('appSecret') || process.env.NUXT_SESSION_PASSWORD || useRuntimeConfig().session.password)
    // hex only, so it can stand in the statement (ALTER ROLE takes no parameters)
    await db.query(`alter role ${gatewayRole} with login password '${password}'`).catch((error: Error) => {
      log.warn(`Could not set the password of ${gatewayRole} (${error.message}); set CHAT_DATABASE_URL`)
    })
    url = gatewayUrl(setting('databaseUrl'), password)
  }
  const pool = new pg.Pool({ connectionString: url, max: 3, idleTimeoutMillis: 30_000 })
  pool.on('error', error => log.error('An idle chat pool client failed', { error }))
  return pool
}

let target: Promise<ChatQueryTarget> | undefined

/**
 * Where query_database runs: on a Postgres server, a small pool of its own whose login role
 * (chat_gateway, or CHAT_DATABASE_URL's) is a member of chat_reader only; on PGlite, the one
 * embedded session.
 */
export function useChatQueryTarget(): Promise<ChatQueryTarget> {
  target ??= useDb().then(async (db): Promise<ChatQueryTarget> => db.kind === 'postgres'
    ? { kind: 'postgres', pool: await openChatPool(db) }
    : { kind: 'pglite', pglite: db.pglite! })
    .catch((error) => {
      target = undefined
      throw error
    })
  return target
}
