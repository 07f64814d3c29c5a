import { test, type Page } from '@playwright/test'
import { startApp, type TestApp } from './app'
import { addMember, createTeam, signUp, type Client } from './http'

/** The password the e2e specs give the accounts they sign up. */
export const e2ePassword = 'correct horse battery'

/** Starts the built app (with `env`) before the spec's tests, hands it to `use` and stops it after them. */
export function appForSpec(use: (app: TestApp) => void, env: Record<string, string> = {}) {
  let app: TestApp | undefined
  test.beforeAll(async () => {
    app = await startApp(env)
    use(app)
  })
  test.afterAll(async () => {
    await app?.stop()
  })
}

/** Opens a page of the app and waits until Vue has hydrated it, so that typing is not lost. */
export async function openPage(page: Page, baseUrl: string, path: string) {
  await page.goto(`${baseUrl}${path}`)
  await page.waitForLoadState('networkidle')
  await page.waitForFunction(() => Boolean((document.querySelector('#__nuxt') as { __vue_app__?: unknown } | null)?.__vue_app__))
}

/** Signs in through the sign-in form, which then goes to `redirect`. */
export async function signInPage(page: Page, baseUrl: string, email: string, redirect: string, password = e2ePassword) {
  await openPage(page, baseUrl, `/login?redirect=${encodeURIComponent(redirect)}`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** A new user, signed up with the e2e password, who owns a new team. */
export async function ownerWithTeam(app: TestApp, names: { owner: string, team: string }): Promise<{ owner: Client, teamId: string }> {
  const owner = await signUp(app, { name: names.owner, password: e2ePassword })
  const teamId = await createTeam(owner, names.team)
  return { owner, teamId }
}

/** The same, with a second new user (the e2e password too) as a plain member of the team. */
export async function teamWithMember(app: TestApp, names: { owner: string, team: string, member: string }): Promise<{ owner: Client, teamId: string, member: Client }> {
  const { owner, teamId } = await ownerWithTeam(app, names)
  const member = await signUp(app, { name: names.member, password: e2ePassword })
  await addMember(app, teamId, member, 'member')
  return { owner, teamId, member }
}
