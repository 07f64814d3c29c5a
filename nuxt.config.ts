// https://nuxt.com/docs/api/configuration/nuxt-config

// APP_BUILD_DIR moves the build (and its output) aside, so that several builds can coexist
// on one machine (scripts/harness/app.ts reads the same variable).
const buildRoot = process.env.APP_BUILD_DIR

export default defineNuxtConfig({
  modules: ['@nuxt/eslint', '@nuxt/ui', 'nuxt-auth-utils'],

  devtools: { enabled: false },

  app: { head: { htmlAttrs: { lang: 'en' } } },

  css: ['~/assets/css/main.css'],

  runtimeConfig: {
    // Postgres connection string; empty means the embedded PGlite in pgliteDataDir.
    databaseUrl: '',
    // 'false' turns off prepared (named) statements, for a connection pooler in transaction mode that cannot keep them.
    databasePrepare: '',
    // A direct Postgres connection (not a pooler) for notifications (LISTEN), migrations and
    // session-level locks; empty: databaseUrl. Set it when databaseUrl is a transaction-mode pooler.
    databaseDirectUrl: '',
    // When set, GET /metrics answers Prometheus text to `Authorization: Bearer <this token>`.
    metricsToken: '',
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
    // A SearXNG-compatible JSON search endpoint; when set the chat gets a web_search tool.
    chatWebSearchUrl: '',
    // On a Postgres server: the connection string of the chat's query pool (a login role that is a
    // member of chat_reader only). Empty: chat_gateway on DATABASE_URL, its password derived from the app secret.
    chatDatabaseUrl: '',
    // Tokens (input + output) a team's chats may use per calendar month; empty: no cap.
    chatTeamMonthlyTokens: '',
    // The planner cost (EXPLAIN) above which the chat refuses a statement without running it; default 100000.
    chatMaxQueryCost: '',
    baseUrl: '',
    // Webhooks (issue 4): 'true' lets webhook URLs reach private, loopback and link-local addresses
    // (local development, tests). The others are test knobs: retry delays in seconds
    // ('1,1,2'; default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), the timeout, the outbox poll interval,
    // the claim lease (default twice the timeout + 5 s) and the auto-disable job's interval (default 1 min).
    webhookAllowPrivateNetworks: '',
    webhookRetrySchedule: '',
    webhookTimeoutMs: '',
    webhookPollIntervalMs: '',
    webhookLeaseSeconds: '',
    webhookMaintenanceIntervalMs: '',
    // How often each instance runs the activity retention purge (default 30 s; tests make it shorter).
    activityPurgeIntervalMs: '',
    apiRateLimit: '',
    apiRateWindowSeconds: '',
    // Seconds a re-authentication (or a sign-in) keeps powerful actions open (SUDO_WINDOW_SECONDS; default 900).
    sudoWindowSeconds: '',
    session: {
      password: '',
      cookie: { sameSite: 'lax' },
      maxAge: 60 * 60 * 24 * 7,
    },
    public: {},
  },

  experimental: {
    // A link loads its page's code when pointed at or focused, not when it comes into view: the
    // sidebar and the settings' tabs made every first visit load and run the code of every page
    // they link to (on /app/settings some twenty files) while the page itself was starting.
    defaults: { nuxtLink: { prefetchOn: { visibility: false, interaction: true } } },
  },

  compatibilityDate: '2025-07-15',

  vite: {
    // The browser's dependencies that Vite's first scan under `npm run dev` does not find: it found
    // them when a page using them was first opened, and then reloaded that page (the first sign-up
    // was created, and its form came back empty). Listed, they are prepared before the first page.
    optimizeDeps: { include: ['zod', '@unovis/vue', '@unovis/ts', '@ai-sdk/vue', 'ai', 'marked', '@simplewebauthn/browser'] },
    // where `npm run dev` keeps the dependencies it has bundled (Nuxt's default when unset); a
    // browser test starts the dev server on an empty one, as a newcomer's first run is
    cacheDir: process.env.NUXT_VITE_CACHE_DIR || undefined,
    build: {
      rollupOptions: {
        output: {
          // Chunks under 4 KB (a composable, a small component shared by some pages) are merged into a
          // chunk loaded in like cases: a signed-in page fetched some forty files, each a request of
          // its own on a phone's connection. A larger minimum also merged some pages' own code into
          // other chunks, where the server no longer found it to preload (the page budget test fails).
          // (a Rollup option: Nuxt builds with Vite 7 and Rollup; the config's types are a later Vite's)
          ...{ experimentalMinChunkSize: 4_000 } as object,
          // (the client's; Nuxt leaves the server's chunks alone)
          manualChunks(id) {
            // The UI kit's primitives that the sidebar's menus, tooltips and drawer use on every
            // page in one chunk, instead of some thirty files of a few hundred bytes that a page
            // fetched one by one; Vue in a chunk of its own that both import, so that the kit
            // never imports the entry (which imports the kit: the toasts).
            if (/\/node_modules\/(@vue|vue|vue-router)\//.test(id)) return 'vue'
            if (/\/node_modules\/(@floating-ui|aria-hidden)\//.test(id)) return 'ui-kit'
            if (/\/node_modules\/reka-ui\/dist\/(shared|utils|composables|Primitive|Presence|VisuallyHidden|Collection|FocusScope|DismissableLayer|Popper|Teleport|ConfigProvider|RovingFocus|Menu|DropdownMenu|Tooltip|Toast|Dialog|Avatar|Separator|Label|Collapsible)\//.test(id)) return 'ui-kit'
          },
        },
      },
    },
  },

  ...(buildRoot ? { buildDir: `${buildRoot}/nuxt` } : {}),

  hooks: {
    // No <link rel="prefetch"> for what a page may load later (its modals, the other pages): a first
    // visit fetched them all while the page was still starting (on /login some twenty files, 50 KiB),
    // on the phone's one slow connection. They load when first used.
    'build:manifest'(manifest) {
      for (const chunk of Object.values(manifest)) chunk.prefetch = false
    },
    // Our API error handler goes first; it leaves every non-API path to Nuxt's own.
    // (set here: nuxt.config's `nitro` key is typed without Nitro's own options in this setup)
    'nitro:config'(config) {
      const nitroConfig = config as {
        errorHandler?: string | string[]
        serverAssets?: { baseName: string, dir: string }[]
        output?: { dir?: string }
        externals?: { traceInclude?: string[] }
        compressPublicAssets?: boolean | { gzip?: boolean, brotli?: boolean }
        experimental?: { websocket?: boolean }
        modules?: unknown[]
      }
      const existing = nitroConfig.errorHandler
      nitroConfig.errorHandler = ['~~/server/error', ...(Array.isArray(existing) ? existing : existing ? [existing] : [])]
      // migrations and seed are bundled with the server, which applies them at start
      nitroConfig.serverAssets = [...(nitroConfig.serverAssets ?? []), { baseName: 'supabase', dir: '../supabase' }]
      // the docs are served as pages (/docs/agents, /docs/api: server/api/docs/[page].get.ts and app/pages/docs)
      nitroConfig.serverAssets.push({ baseName: 'docs', dir: '../docs' })
      // the client's files are stored gzip- and brotli-compressed beside the originals, and served
      // compressed to browsers that accept it (the entry chunk is about a quarter of its size)
      nitroConfig.compressPublicAssets = { gzip: true, brotli: true }
      // WebSocket routes (crossws): supabase-js's realtime socket, server/routes/realtime/v1/websocket.ts
      nitroConfig.experimental = { ...nitroConfig.experimental, websocket: true }
      // Handlers auto-import from server/utils' root files and from each folder's public face
      // (server/utils/<folder>/index.ts) only; Nitro would scan every file below server/utils. A Nitro
      // module runs after Nitro has added its default, and before the auto-imports are scanned.
      nitroConfig.modules = [...(nitroConfig.modules ?? []), (nitro: { options: { imports: false | { dirs?: string[] } } }) => {
        const imports = nitro.options.imports
        if (!imports) return
        imports.dirs = (imports.dirs ?? []).flatMap(dir => /[/\\]server[/\\]utils[/\\]\*\*[/\\]\*$/.test(dir)
          ? [dir.replace(/\*\*[/\\]\*$/, '*.ts'), dir.replace(/\*\*[/\\]\*$/, '*/index.ts')]
          : [dir])
      }]
      if (buildRoot) nitroConfig.output = { ...nitroConfig.output, dir: `${buildRoot}/output` }
      // the chat's SQL parser loads its .wasm from beside its script, which file tracing cannot see
      nitroConfig.externals = {
        ...nitroConfig.externals,
        traceInclude: [
          ...(nitroConfig.externals?.traceInclude ?? []),
          'node_modules/libpg-query/wasm/libpg-query.wasm',
          // express (the MCP SDK's OAuth handlers) reaches these through get-intrinsic; Node 20.19+
          // requires their `module-sync` entry, which file tracing does not follow
          ...['async-function', 'generator-function', 'async-generator-function'].map(name => `node_modules/${name}/require.mjs`),
        ],
      }
    },
  },

  eslint: {
    config: { stylistic: true },
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

  // A build must not reach the network: icons come from the local @iconify-json collections,
  // and no remote font provider is asked.
  icon: {
    // drawn as inline SVG in the server's HTML: as CSS (the default) each icon was a data: image
    // that the browser fetched as a request of its own, some ten on a signed-in page
    mode: 'svg',
    // the collections the app has (its icons are named i-lucide-… and i-solar-…): every icon on a
    // page sorted the list of all Iconify collections (some two hundred names, shipped in the
    // entry) to resolve its name, most of a table's hydration on a phone
    collections: ['lucide', 'solar'],
    serverBundle: 'local',
    clientBundle: { scan: true },
  },
})
