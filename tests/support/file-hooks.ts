import { afterAll, afterEach, beforeAll } from 'vitest'
import { startApp, type TestApp } from './app'
import { teamWithRoles, type TeamFixture } from './http'
import { startScriptedModel, type ScriptedModelServer } from './openai-server'
import { startWebhookReceiver, type ReceiverBehaviour, type WebhookReceiver } from './webhook-receiver'

// The set-ups most integration test files share, as hooks a file registers with one call. Each hands
// what it started to `use`, which keeps it in the file's own variables: the tests then read them
// as before, and the hooks own the order of starting and the stopping.

export interface AppWithTeam {
  app: TestApp
  /** A team with an owner, an admin and a member, plus a signed-in outsider and a signed-out client. */
  team: TeamFixture
}

export interface AppWithModel extends AppWithTeam {
  /** The scripted model the app's chat talks to. */
  model: ScriptedModelServer
}

type Env = Record<string, string>

/** Starts the built app (with `env`) and a team with roles before the file's tests; stops the app after them. */
export function appWithTeamForFile(env: Env | (() => Env), use: (started: AppWithTeam) => void | Promise<void>) {
  let app: TestApp | undefined
  beforeAll(async () => {
    app = await startApp(typeof env === 'function' ? env() : env)
    await use({ app, team: await teamWithRoles(app) })
  })
  afterAll(() => app?.stop())
}

/**
 * The same with a scripted model that the app's chat talks to; `env` may name the model's URLs
 * (e.g. its search endpoint). The model closes after the app has stopped.
 */
export function appWithModelForFile(env: (model: ScriptedModelServer) => Env, use: (started: AppWithModel) => void | Promise<void>) {
  let model: ScriptedModelServer | undefined
  beforeAll(async () => {
    model = await startScriptedModel()
  })
  // registered before the app's hooks, so it runs after the app's afterAll (after-hooks run in reverse)
  afterAll(() => model?.close())
  appWithTeamForFile(
    () => ({ LLM_PROVIDER_API_KEY: 'test-key', LLM_PROVIDER_BASE_URL: model!.url, LLM_MODEL: 'scripted-model', ...env(model!) }),
    started => use({ ...started, model: model! }),
  )
}

/**
 * For a file of webhook tests: the app and a team with roles as appWithTeamForFile, the app delivering
 * to receivers on 127.0.0.1 with a fast poll (100 ms; `settings` add to that or override it). The
 * returned function starts a receiver that verifies deliveries with `secret`; every receiver a test
 * started is closed after that test.
 */
export function webhookAppForFile(settings: Env, use: (started: AppWithTeam) => void | Promise<void>): (secret: string, behaviour?: ReceiverBehaviour) => Promise<WebhookReceiver> {
  appWithTeamForFile({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '100', ...settings }, use)
  const open: WebhookReceiver[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map(receiver => receiver.close()))
  })
  return async (secret, behaviour) => {
    const receiver = await startWebhookReceiver(behaviour)
    receiver.secret = secret
    open.push(receiver)
    return receiver
  }
}

/**
 * Two app processes on one Postgres database (a load balancer may send any request to either):
 * the first on a fresh database, the second on the first's; both stopped after the file's tests.
 */
export function twoAppsForFile(use: (first: TestApp, second: TestApp) => void) {
  let first: TestApp | undefined
  let second: TestApp | undefined
  beforeAll(async () => {
    first = await startApp()
    second = await startApp({}, { databaseUrl: first.databaseUrl })
    use(first, second)
  })
  afterAll(async () => {
    await second?.stop()
    await first?.stop()
  })
}
