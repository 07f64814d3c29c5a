import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

// Outside production the session password is generated once into .data/ when unset;
// production refuses to start without NUXT_SESSION_PASSWORD. The runtime config is frozen, but
// the session code reads it per request with the environment applied, so the environment is set.
function ensureSessionPassword() {
  const config = useRuntimeConfig()
  if (config.session.password) return
  if (process.env.NODE_ENV === 'production' && process.env.ALLOW_GENERATED_SESSION_PASSWORD !== 'true') {
    logger('auth').error('NUXT_SESSION_PASSWORD (32+ characters) must be set in production')
    process.exit(1)
  }
  const file = join(config.pgliteDataDir.startsWith('memory://') ? '.data' : dirname(config.pgliteDataDir), 'session-password')
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 })
  }
  process.env.NUXT_SESSION_PASSWORD = readFileSync(file, 'utf8').trim()
}

export default defineNitroPlugin(() => {
  ensureSessionPassword()
  useDb().catch((error: Error) => {
    logger('db').error('The database could not be opened', { error })
    process.exit(1)
  })
})
