import { afterAll, beforeAll } from 'vitest'
import { startApp, type TestApp } from './app'
import { teamWithRoles, type TeamFixture } from './http'

// The set-ups most integration test files share, as hooks a file registers with one call. Each hands
// what it started to `use`, which keeps it in the file's own variables: the tests then read them
// as before, and the hooks own the order of starting and the stopping.

export interface AppWithTeam {
  app: TestApp
  /** A team with an owner, an admin and a member, plus a signed-in outsider and a signed-out client. */
  team: TeamFixture
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
