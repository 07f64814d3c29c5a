import { expect, test, type Page, type Request } from '@playwright/test'
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

/** The live pages' event stream stays open: it never counts as a request in flight. */
const isEventStream = (request: Request) => request.url().includes('/events/stream')

/**
 * Opens a page of the app and waits until Vue has hydrated it and no request is in flight for
 * 500 ms (Playwright's networkidle, except that the live pages' event stream, always open, is not
 * counted), so that typing is not lost.
 */
export async function openPage(page: Page, baseUrl: string, path: string) {
  const inFlight = new Set<Request>()
  const started = (request: Request) => {
    if (!isEventStream(request)) inFlight.add(request)
  }
  const ended = (request: Request) => inFlight.delete(request)
  page.on('request', started)
  page.on('requestfinished', ended)
  page.on('requestfailed', ended)
  try {
    await page.goto(`${baseUrl}${path}`)
    let quietSince = Date.now()
    await expect.poll(() => {
      if (inFlight.size) quietSince = Date.now()
      return Date.now() - quietSince
    }, { timeout: 30_000, intervals: [50] }).toBeGreaterThanOrEqual(500)
    await page.waitForFunction(() => Boolean((document.querySelector('#__nuxt') as { __vue_app__?: unknown } | null)?.__vue_app__))
  }
  finally {
    page.off('request', started)
    page.off('requestfinished', ended)
    page.off('requestfailed', ended)
  }
}

/**
 * Switches the page's colour scheme as the system setting would (the app follows it without a
 * reload) and waits until the page has followed it and its colour transitions have ended.
 */
export async function useColorScheme(page: Page, scheme: 'light' | 'dark') {
  await page.emulateMedia({ colorScheme: scheme })
  await expect.poll(() => page.evaluate(() => document.documentElement.classList.contains('dark'))).toBe(scheme === 'dark')
  // transitions only: an endless animation (a spinner, a pulsing dot) never ends
  await page.waitForFunction(() => document.getAnimations().every(animation => !(animation instanceof CSSTransition) || animation.playState !== 'running'))
}

/** Signs in through the sign-in form, which then goes to `redirect`. */
export async function signInPage(page: Page, baseUrl: string, email: string, redirect: string, password = e2ePassword) {
  await openPage(page, baseUrl, `/login?redirect=${encodeURIComponent(redirect)}`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
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
