import { expect, test } from '@playwright/test'
import { startDevServer, type DevServer } from '../support/dev-server'
import { uniqueEmail } from '../support/http'

// A newcomer's first `npm run dev`: the embedded database, seeded, and no dependencies bundled yet
// (an empty Vite cache of its own). Vite bundles a browser dependency the first time a page imports
// one it did not find in its first scan, and then reloads the page: the first sign-up was created
// and its form came back empty. Signing up and opening the pages a new account opens must go
// through without such a reload.

let dev: DevServer
let url: string

test.beforeAll(async () => {
  test.setTimeout(300_000)
  dev = await startDevServer({ freshCache: true })
  url = dev.url
})

test.afterEach(() => {
  // what the dev server said (Vite's reloads among it), printed beside a failure
  const info = test.info()
  if (info.status !== info.expectedStatus) console.log(dev.output.join(''))
})

test.afterAll(() => dev?.stop())

test('the first sign-up on a fresh npm run dev reaches the app, and no page reloads itself', async ({ page }) => {
  test.setTimeout(240_000)
  let loads = 0
  page.on('load', () => loads++)
  await page.goto(`${url}/signup`)
  await page.waitForFunction(() => Boolean((document.querySelector('#__nuxt') as { __vue_app__?: unknown } | null)?.__vue_app__), undefined, { timeout: 120_000 })
  await page.getByLabel('Name').fill('Nia Newcomer')
  await page.getByLabel('E-mail').fill(uniqueEmail('newcomer'))
  await page.getByLabel('Password').fill('correct horse battery')
  await page.getByRole('button', { name: 'Create account' }).click()
  await expect(page).toHaveURL(`${url}/app`, { timeout: 60_000 })
  await expect(page.getByText('Create your first team')).toBeVisible({ timeout: 60_000 })
  await page.getByRole('button', { name: 'Create team' }).click()
  const dialog = page.getByRole('dialog')
  await dialog.getByLabel('Team name').fill('First Team')
  await dialog.getByRole('button', { name: 'Create team' }).click()
  await expect(page.getByTestId('team-switcher')).toContainText('First Team', { timeout: 60_000 })
  // the pages a new team opens first, through the app's own links (no page load of their own)
  const workspace = page.getByRole('navigation', { name: 'Workspace' })
  for (const [name, path] of [['Settings', '/app/settings'], ['Activity', '/app/activity']] as const) {
    await workspace.getByRole('link', { name }).click()
    await expect(page).toHaveURL(`${url}${path}`, { timeout: 60_000 })
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible({ timeout: 60_000 })
  }
  // one page load (the sign-up page's): Vite never reloaded a page to add a dependency
  expect(loads).toBe(1)
  expect(dev.output.join('')).not.toMatch(/optimized dependencies changed|reloading/i)
})
