import { expect, test, type Browser, type Page } from '@playwright/test'
import type { TestApp } from '../support/app'
import { appForSpec, openPage, ownerWithTeam } from '../support/browser'
import type { Client } from '../support/http'
import { waitFor } from '../support/wait'
import { axeOn, controlsOutside, seriousViolations } from '../support/axe'

// What an admin sees of a key's requests: the key list's 24-hour count, the key's page (usage,
// most frequent errors, its log, an entry in a panel), and the team's API log tab with a search
// by the Request-Id an integration quotes. Both pages at three widths, light and dark, axe-clean.
let app: TestApp
appForSpec(started => (app = started), { API_LOG_FLUSH_MS: '100' })

let owner: Client
let teamId: string
let keyId: string
let notFoundId: string

test.beforeAll(async () => {
  ({ owner, teamId } = await ownerWithTeam(app, { owner: 'Olive Owner', team: 'Logged Team' }))
  const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Warehouse sync', expires_at: null })
  expect(created.status).toBe(201)
  keyId = created.body.id
  const call = (path: string, init: RequestInit = {}) => fetch(`${app.url}${path}`, {
    ...init,
    headers: { 'authorization': `Bearer ${created.body.key}`, 'content-type': 'application/json', 'user-agent': 'warehouse-sync/2.1' },
  })
  for (let i = 0; i < 3; i++) expect((await call('/api/v1/tasks')).status).toBe(200)
  expect((await call('/api/v1/tasks', { method: 'POST', body: JSON.stringify({ title: 'Synced' }) })).status).toBe(201)
  expect((await call('/api/v1/tasks', { method: 'POST', body: JSON.stringify({ title: 5 }) })).status).toBe(400)
  const missing = await call('/api/v1/invoices')
  expect(missing.status).toBe(404)
  notFoundId = missing.headers.get('request-id')!
  await waitFor('the six entries', async () => (await owner.get(`/api/teams/${teamId}/api-log?api_key_id=${keyId}`)).body.entries?.length === 6)
})

async function signedIn(browser: Browser, options: { width?: number, scheme?: 'light' | 'dark' } = {}): Promise<Page> {
  const context = await browser.newContext({ colorScheme: options.scheme ?? 'light', viewport: { width: options.width ?? 1440, height: 900 } })
  const [name, value] = owner.cookie.split('=')
  await context.addCookies([{ name: name!, value: value!, url: app.url }])
  return context.newPage()
}

test('from the key list to the key\'s page: its usage, its errors, its log and one entry in a panel', async ({ browser }) => {
  const page = await signedIn(browser)
  await openPage(page, app.url, '/app/settings/api-keys')
  await expect(page.getByTestId('key-requests')).toHaveText('6 requests in the last 24 h')
  await page.getByTestId('key-link').filter({ hasText: 'Warehouse sync' }).click()
  await expect(page).toHaveURL(`${app.url}/app/settings/api-keys/${keyId}`)
  await expect(page.getByTestId('key-name')).toHaveText('Warehouse sync')
  await expect(page.getByTestId('usage-requests')).toHaveText('6')
  await expect(page.getByTestId('usage-p95')).not.toHaveText('—')
  await expect(page.getByTestId('key-usage').locator('figcaption')).toContainText('6 requests, 4 succeeded, 2 client errors')
  const errors = page.getByTestId('key-top-errors')
  await expect(errors.getByText('400')).toBeVisible()
  await expect(errors.getByText('404')).toBeVisible()
  // the range: 7 days, the same requests
  await page.getByTestId('usage-range').click()
  await page.getByRole('option', { name: 'Last 7 days' }).click()
  await expect(page.getByTestId('usage-requests')).toHaveText('6')

  const table = page.getByTestId('api-log-table')
  await expect(table.getByTestId('api-log-open')).toHaveCount(6)
  await page.getByTestId('api-log-filter-status').click()
  await page.getByRole('option', { name: '4xx' }).click()
  await expect(table.getByTestId('api-log-open')).toHaveCount(2)
  await table.getByRole('button', { name: new RegExp(`request ${notFoundId}$`) }).click()
  const panel = page.getByTestId('api-log-entry')
  await expect(panel).toContainText(notFoundId)
  await expect(panel).toContainText('/api/v1/invoices')
  await expect(panel).toContainText('warehouse-sync/2.1')
  await expect(panel).toContainText('PGRST205')
  await page.keyboard.press('Escape')
  await expect(panel).toBeHidden()
  await page.context().close()
})

test('the API log tab finds a request by the id an integration quotes', async ({ browser }) => {
  const page = await signedIn(browser)
  await openPage(page, app.url, '/app/settings')
  await page.getByRole('link', { name: 'API log' }).click()
  await expect(page).toHaveURL(`${app.url}/app/settings/api-log`)
  await expect(page.getByTestId('api-log-open')).toHaveCount(6)
  await page.getByRole('textbox', { name: 'Find a request by its id' }).fill(notFoundId)
  await page.keyboard.press('Enter')
  await expect(page.getByTestId('api-log-open')).toHaveCount(1)
  await page.getByTestId('api-log-open').click()
  await expect(page.getByTestId('api-log-entry')).toContainText('404')
  await page.keyboard.press('Escape')
  await page.getByRole('button', { name: 'Clear filters' }).click()
  await expect(page.getByTestId('api-log-open')).toHaveCount(6)
  await page.context().close()
})

for (const path of ['/app/settings/api-keys/:key', '/app/settings/api-log', '/app/settings/api-log (entry open)']) {
  test(`${path} at 390, 820 and 1440 px, light and dark: no serious axe violation, nothing off screen`, async ({ browser }) => {
    const problems: string[] = []
    for (const scheme of ['light', 'dark'] as const) {
      const page = await signedIn(browser, { width: 390, scheme })
      await openPage(page, app.url, path.replace(':key', keyId).replace(' (entry open)', ''))
      await expect(page.getByTestId('api-log-open').first()).toBeVisible()
      if (path.endsWith('(entry open)')) {
        await page.getByTestId('api-log-open').first().click()
        await expect(page.getByTestId('api-log-entry')).toBeVisible()
        await page.waitForFunction(() => document.getAnimations().every(animation => animation.playState !== 'running'))
      }
      for (const width of [390, 820, 1440]) {
        await page.setViewportSize({ width, height: width < 800 ? 844 : 900 })
        await expect(page.locator('[aria-busy="true"]')).toHaveCount(0)
        const where = `${path} at ${width}px ${scheme}`
        for (const violation of await seriousViolations(axeOn(page))) {
          problems.push(`${where}: ${violation.id} (${violation.impact}) ${violation.nodes.slice(0, 3).map(node => node.target.join(' ')).join(', ')}`)
        }
        for (const control of await controlsOutside(page)) problems.push(`${where}: ${control} is outside the viewport`)
      }
      await page.context().close()
    }
    expect(problems).toEqual([])
  })
}
