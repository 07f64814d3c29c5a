import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

// Outside production the session password is generated once into .data/ when unset;
// production refuses to start without NUXT_SESSION_PASSWORD.
function ensureSessionPassword() {
  const config = useRuntimeConfig()
  if (config.session.password) return
  if (process.env.NODE_ENV === 'production' && process.env.ALLOW_GENERATED_SESSION_PASSWORD !== 'true') {
    console.error('[auth] NUXT_SESSION_PASSWORD (32+ characters) must be set in production')
    process.exit(1)
  }
  const file = join(config.pgliteDataDir.startsWith('memory://') ? '.data' : dirname(config.pgliteDataDir), 'session-password')
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 })
  }
  config.session.password = readFileSync(file, 'utf8').trim()
}

// The documented variable names (DATABASE_URL, LLM_PROVIDER_API_KEY, ...) are read as well as
// Nuxt's NUXT_-prefixed ones; runtimeConfig stays the one place the code reads settings from.
const plainEnvironment = {
  databaseUrl: 'DATABASE_URL',
  appSecret: 'APP_SECRET',
  baseUrl: 'BASE_URL',
  llmProviderApiKey: 'LLM_PROVIDER_API_KEY',
  llmProviderBaseUrl: 'LLM_PROVIDER_BASE_URL',
  llmModel: 'LLM_MODEL',
} as const

function applyPlainEnvironment() {
  const config = useRuntimeConfig() as unknown as Record<string, unknown>
  for (const [key, name] of Object.entries(plainEnvironment)) {
    if (!config[key] && process.env[name]) config[key] = process.env[name]
  }
}

export default defineNitroPlugin(() => {
  applyPlainEnvironment()
  ensureSessionPassword()
  useDb().catch((error: Error) => {
    console.error('[db] The database could not be opened:', error.message)
    process.exit(1)
  })
})
