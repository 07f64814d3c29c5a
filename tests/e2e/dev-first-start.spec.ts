import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from '@playwright/test'
import { uniqueEmail } from '../support/http'
import { freePort } from '../support/ports'
import { waitFor } from '../support/wait'

// A newcomer's first `npm run dev`: the embedded database, seeded, and no dependencies bundled yet
// (an empty Vite cache of its own). Vite bundles a browser dependency the first time a page imports
// one it did not find in its first scan, and then reloads the page: the first sign-up was created
// and its form came back empty. Signing up and opening the pages a new account opens must go
// through without such a reload.

let folder: string
let child: ChildProcess
let url: string
const output: string[] = []

test.beforeAll(async () => {
  test.setTimeout(300_000)
  folder = mkdtempSync(join(tmpdir(), 'tws-dev-e2e-'))
  const port = await freePort()
  url = `http://127.0.0.1:${port}`
  child = spawn(process.execPath, ['node_modules/nuxt/bin/nuxt.mjs', 'dev', '--port', String(port), '--host', '127.0.0.1'], {
    env: { ...process.env, NODE_ENV: 'development', NUXT_PGLITE_DATA_DIR: join(folder, 'db'), NUXT_PGLITE_SOCKET_PORT: '', NUXT_VITE_CACHE_DIR: join(folder, 'vite') },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  child.stdout!.on('data', chunk => output.push(String(chunk)))
  child.stderr!.on('data', chunk => output.push(String(chunk)))
  await waitFor('the dev server to answer /api/health', async () => {
    if (child.exitCode !== null) throw new Error(`nuxt dev exited (${child.exitCode}):\n${output.join('')}`)
    return (await fetch(`${url}/api/health`).catch(() => null))?.ok
  }, { timeoutMs: 240_000, intervalMs: 250 })
})

test.afterEach(() => {
  // what the dev server said (Vite's reloads among it), printed beside a failure
  const info = test.info()
  if (info.status !== info.expectedStatus) console.log(output.join(''))
})

test.afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    const exited = new Promise(resolve => child.once('exit', resolve))
    process.kill(-child.pid, 'SIGTERM')
    await exited
  }
  if (folder) rmSync(folder, { recursive: true, force: true })
})

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
  expect(output.join('')).not.toMatch(/optimized dependencies changed|reloading/i)
})
