// https://nuxt.com/docs/api/configuration/nuxt-config

// APP_BUILD_DIR moves the build (and its output) aside, so that several builds can coexist
// on one machine (tests/support/app.ts reads the same variable).
const buildRoot = process.env.APP_BUILD_DIR

export default defineNuxtConfig({
  modules: ['@nuxt/eslint', '@nuxt/ui', 'nuxt-auth-utils'],

  devtools: { enabled: false },

  css: ['~/assets/css/main.css'],

  runtimeConfig: {
    // Postgres connection string; empty means the embedded PGlite in pgliteDataDir.
    databaseUrl: '',
    pgliteDataDir: '.data/db',
    // When set, the embedded database also listens on this port for psql and tests.
    pgliteSocketPort: '',
    // Seed the demo account and rows when the database has no users (default: only on PGlite).
    seedDemo: '',
    appSecret: '',
    // The chat is enabled only when an LLM provider key is set (issue: chat).
    llmProviderApiKey: '',
    llmProviderBaseUrl: '',
    llmModel: '',
    baseUrl: '',
    session: {
      password: '',
      cookie: { sameSite: 'lax' },
      maxAge: 60 * 60 * 24 * 7,
    },
    public: {},
  },

  compatibilityDate: '2025-07-15',

  ...(buildRoot ? { buildDir: `${buildRoot}/nuxt` } : {}),

  nitro: {
    ...(buildRoot ? { output: { dir: `${buildRoot}/output` } } : {}),
    serverAssets: [{ baseName: 'supabase', dir: '../supabase' }],
    experimental: { tasks: false },
  },

  hooks: {
    // Our API error handler goes first; it leaves every non-API path to Nuxt's own.
    'nitro:config'(config) {
      const existing = config.errorHandler
      config.errorHandler = ['~~/server/error', ...(Array.isArray(existing) ? existing : existing ? [existing] : [])]
    },
  },

  eslint: {
    config: { stylistic: true },
  },

  // A build must not reach the network: icons come from the local @iconify-json collections,
  // and no remote font provider is asked.
  icon: {
    serverBundle: 'local',
    clientBundle: { scan: true },
  },
  fonts: {
    providers: {
      google: false,
      googleicons: false,
      bunny: false,
      fontshare: false,
      fontsource: false,
      adobe: false,
    },
  },
})
