import { expect, test, type Browser, type Page } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { openPage, useColorScheme } from '../support/browser'
import { createTeam, signUp, uniqueEmail, type Client } from '../support/http'
import { connectApp, pkce, registerClient, requestIdOf, startAuthorization } from '../support/oauth'
import { problemsAtEveryWidth } from '../support/axe'

// The consent page of the MCP server's OAuth flow and Settings > Connected apps: axe-clean at 390,
// 820 and 1440 px in light and dark, usable by keyboard, and their main flows.
let app: TestApp
let owner: Client
let teamId: string
const callback = 'http://127.0.0.1:45998/callback'

test.beforeAll(async () => {
  app = await startApp()
  owner = await signUp(app, { email: uniqueEmail('oauth-owner'), name: 'Olive Owner' })
  teamId = await createTeam(owner, 'Connected Team')
})
test.afterAll(async () => {
  await app?.stop()
})

async function signedInPage(browser: Browser, scheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 390, height: 844 } })
  const [name, value] = owner.cookie.split('=')
  await context.addCookies([{ name: name!, value: value!, url: app.url }])
  return context.newPage()
}

async function newConsentPath(name = 'Claude for Work: the long name of a connector') {
  const clientId = await registerClient(app, [callback], name)
  return startAuthorization(owner, { clientId, redirectUri: callback, challenge: pkce().challenge, state: 'kb' })
}

test('the consent page and its error form are axe-clean at every width, light and dark', async ({ browser }) => {
  const page = await signedInPage(browser, 'dark')
  await openPage(page, app.url, await newConsentPath())
  await expect(page.getByTestId('consent-client')).toBeVisible()
  const problems = await problemsAtEveryWidth(page, 'consent')
  await openPage(page, app.url, '/oauth/consent?error=The%20app%20that%20sent%20you%20here%20is%20not%20registered')
  await expect(page.getByText('This connection cannot be made')).toBeVisible()
  problems.push(...await problemsAtEveryWidth(page, 'consent error'))
  await page.context().close()
  expect(problems).toEqual([])
})

test('by keyboard: choose write for tasks and none for notes, approve, and the app receives its code and state', async ({ browser }) => {
  const page = await signedInPage(browser)
  let landed = ''
  await page.route(`${callback}**`, async (route) => {
    landed = route.request().url()
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'ok' })
  })
  const path = await newConsentPath('Keyboard Agent')
  await openPage(page, app.url, path)
  await expect(page.getByTestId('consent-client')).toHaveText('Keyboard Agent')
  await expect(page.getByTestId('consent-redirect-host')).toHaveText('127.0.0.1:45998')
  // tab to the tasks group's checked radio (Read), then to Read and write
  const tasksRead = page.getByRole('group', { name: 'tasks' }).getByRole('radio', { name: 'Read', exact: true })
  for (let i = 0; i < 30 && !(await tasksRead.evaluate(element => element === document.activeElement)); i++) await page.keyboard.press('Tab')
  await expect(tasksRead).toBeFocused()
  // the arrow moves the focus along the group; Space checks the focused radio
  await page.keyboard.press('ArrowRight')
  await page.keyboard.press('Space')
  await expect(page.getByRole('group', { name: 'tasks' }).getByRole('radio', { name: 'Read and write' })).toBeChecked()
  const notesRead = page.getByRole('group', { name: 'notes' }).getByRole('radio', { name: 'Read', exact: true })
  for (let i = 0; i < 30 && !(await notesRead.evaluate(element => element === document.activeElement)); i++) await page.keyboard.press('Tab')
  await page.keyboard.press('ArrowLeft')
  await page.keyboard.press('Space')
  await expect(page.getByRole('group', { name: 'notes' }).getByRole('radio', { name: 'None' })).toBeChecked()
  const approve = page.getByRole('button', { name: 'Approve' })
  for (let i = 0; i < 30 && !(await approve.evaluate(element => element === document.activeElement)); i++) await page.keyboard.press('Tab')
  await expect(approve).toBeFocused()
  await page.keyboard.press('Enter')
  await expect.poll(() => landed).toContain('code=')
  expect(new URL(landed).searchParams.get('state')).toBe('kb')
  const { rows } = await app.db.query(`select scopes from public.oauth_codes c join public.oauth_clients k on k.client_id = c.client_id where k.client_name = 'Keyboard Agent'`)
  expect(rows[0].scopes.tasks).toBe('write')
  expect(rows[0].scopes.notes).toBeUndefined()
  await page.context().close()
})

test('Deny sends the app back with access_denied', async ({ browser }) => {
  const page = await signedInPage(browser)
  let landed = ''
  await page.route(`${callback}**`, async (route) => {
    landed = route.request().url()
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'ok' })
  })
  await openPage(page, app.url, await newConsentPath('Denied Agent'))
  await page.getByRole('button', { name: 'Deny' }).click()
  await expect.poll(() => landed).toContain('error=access_denied')
  await page.context().close()
})

test('Settings > Connected apps lists a connection and revokes it after a confirmation; axe-clean', async ({ browser }) => {
  const { tokens } = await connectApp(owner, teamId, { tasks: 'read' })
  await app.db.query(`update public.oauth_grants set client_name = 'ChatGPT connector for the support team' where team_id = $1`, [teamId])
  const page = await signedInPage(browser, 'dark')
  await openPage(page, app.url, '/app/settings/connected-apps')
  await expect(page.getByTestId('grants-table')).toContainText('ChatGPT connector for the support team')
  expect(await problemsAtEveryWidth(page, 'connected apps')).toEqual([])

  await useColorScheme(page, 'light')
  await page.setViewportSize({ width: 1440, height: 900 })
  const table = page.getByTestId('grants-table')
  await expect(table).toContainText('Olive Owner')
  await expect(table.getByTestId('grant-access')).toHaveText('tasks: read')
  await table.getByRole('button', { name: 'Revoke ChatGPT connector for the support team' }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke connection' }).click()
  await expect(table).toContainText('Revoked')
  const answer = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'authorization': `Bearer ${tokens.access_token}`, 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) })
  expect(answer.status).toBe(401)
  await page.context().close()
})

test('the activity page names the app that made a write', async ({ browser }) => {
  const { tokens } = await connectApp(owner, teamId, { tasks: 'write' })
  await app.db.query(`update public.oauth_grants set client_name = 'Activity Agent' where team_id = $1 and scopes ->> 'tasks' = 'write'`, [teamId])
  const call = await fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { 'authorization': `Bearer ${tokens.access_token}`, 'content-type': 'application/json', 'accept': 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_tasks', arguments: { title: 'Written by an agent' } } }),
  })
  expect(call.status).toBe(200)
  const page = await signedInPage(browser)
  await page.setViewportSize({ width: 1440, height: 900 })
  await openPage(page, app.url, '/app/activity')
  await expect(page.getByTestId('activity-client').first()).toHaveText('Activity Agent')
  await page.context().close()
})

test('signed out, the consent page sends the user to sign in and back', async ({ page }) => {
  const path = await newConsentPath('Signed-out Agent')
  await openPage(page, app.url, path)
  await expect(page).toHaveURL(/\/login\?redirect=/)
  expect(decodeURIComponent(new URL(page.url()).searchParams.get('redirect')!)).toBe(`/oauth/consent?request=${requestIdOf(path)}`)
})
