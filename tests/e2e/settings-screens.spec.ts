import { expect, test, type Browser, type Page } from '@playwright/test'
import type { TestApp } from '../support/app'
import { appForSpec, openPage, teamWithMember } from '../support/browser'
import { KeyClient, type Client } from '../support/http'
import { waitFor } from '../support/wait'

// The settings screens as a careful user finds them: a key's page loaded directly, one layout for
// every section, what fits at a phone's width, one way of writing a moment, the logs' retention,
// and pages that hydrate without a mismatch.
let app: TestApp
appForSpec((started) => {
  app = started
})

let owner: Client
let teamId: string
let keyId: string

test.beforeAll(async () => {
  const team = await teamWithMember(app, { owner: 'Sara Settings', team: 'Screens Team', member: 'Milo Member' })
  owner = team.owner
  teamId = team.teamId
  const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Screens sync' })
  expect(created.status).toBe(201)
  keyId = created.body.id
  const key = new KeyClient(app, created.body.key)
  const task = await key.post('/api/v1/tasks', { title: 'Seen in the log' })
  expect(task.status).toBe(201)
  expect((await key.delete(`/api/v1/tasks?id=eq.${task.body.id}`)).status).toBe(204)
  expect((await key.post('/api/v1/tasks', { title: 5 })).status).toBe(400)
  await waitFor('the three entries', async () => (await owner.get(`/api/teams/${teamId}/api-log?api_key_id=${keyId}`)).body.entries?.length === 3)
})

async function signedIn(browser: Browser, width = 1440): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } })
  const [name, value] = owner.cookie.split('=')
  await context.addCookies([{ name: name!, value: value!, url: app.url }])
  return context.newPage()
}

test('a key\'s page loaded directly shows its most frequent errors', async ({ browser }) => {
  const page = await signedIn(browser)
  await openPage(page, app.url, `/app/settings/api-keys/${keyId}`)
  const errors = page.getByTestId('key-top-errors')
  await expect(errors.getByText('400')).toBeVisible()
  await expect(errors).not.toContainText('could not be loaded')
  // a reload renders it on the server again
  await page.reload()
  await expect(errors.getByText('400')).toBeVisible()
  await page.context().close()
})

test('every settings section has one layout: the main button ends the heading\'s row at the right, one width for tables', async ({ browser }) => {
  const page = await signedIn(browser)
  const widths: Record<string, number> = {}
  for (const [path, button] of [['/app/settings/api-keys', 'Create Key'], ['/app/settings/members', 'Invite member'], ['/app/settings/webhooks', 'Add endpoint']] as const) {
    await openPage(page, app.url, path)
    const header = page.getByTestId('section-header').first()
    const main = header.getByRole('button', { name: button })
    await expect(main).toBeVisible()
    const headerBox = (await header.boundingBox())!
    const buttonBox = (await main.boundingBox())!
    const titleBox = (await header.getByRole('heading').boundingBox())!
    // at the right edge, on the heading's row
    expect(Math.abs(headerBox.x + headerBox.width - (buttonBox.x + buttonBox.width)), path).toBeLessThanOrEqual(1)
    expect(buttonBox.y, path).toBeLessThan(titleBox.y + titleBox.height)
    if (path === '/app/settings/api-keys') {
      const filterBox = (await page.getByTestId('api-keys-filter').boundingBox())!
      expect(Math.abs((filterBox.y + filterBox.height / 2) - (buttonBox.y + buttonBox.height / 2))).toBeLessThanOrEqual(2)
      expect(filterBox.x + filterBox.width).toBeLessThanOrEqual(buttonBox.x)
    }
    widths[path] = (await page.getByTestId('settings-body').boundingBox())!.width
  }
  for (const path of ['/app/settings/api-log', '/app/settings/connected-apps', '/app/settings']) {
    await openPage(page, app.url, path)
    widths[path] = (await page.getByTestId('settings-body').boundingBox())!.width
  }
  const tableWidth = widths['/app/settings/api-keys']!
  for (const path of ['/app/settings/members', '/app/settings/webhooks', '/app/settings/api-log', '/app/settings/connected-apps']) expect(widths[path], path).toBe(tableWidth)
  // the form reads in a narrower column
  expect(widths['/app/settings']).toBeLessThan(tableWidth)
  await page.context().close()
})

test('at 390 px the API log\'s methods and the members\' roles are whole, and nothing scrolls sideways', async ({ browser }) => {
  const page = await signedIn(browser, 390)
  await openPage(page, app.url, '/app/settings/api-log')
  const methods = page.getByTestId('api-log-method')
  await expect(methods).toHaveCount(3)
  // one line box each: "DELETE" is not broken into fragments
  expect(await methods.evaluateAll(spans => spans.map(span => `${span.textContent} ${span.getClientRects().length}`))).toEqual(['POST 1', 'DELETE 1', 'POST 1'])

  await openPage(page, app.url, '/app/settings/members')
  const role = page.getByRole('combobox', { name: 'Role of Milo Member' })
  await expect(role).toContainText('Member')
  // the shown role is not cut ("Me…"): its text fits its box
  expect(await role.evaluate((select) => {
    const text = [...select.querySelectorAll('span')].find(span => span.textContent?.trim() === 'Member')!
    return text.scrollWidth <= text.clientWidth
  })).toBe(true)
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
  await page.context().close()
})

test('a moment is written one way: relative within a day, the full date and time on hover', async ({ browser }) => {
  const page = await signedIn(browser)
  await page.context().addCookies([{ name: 'tz', value: 'UTC', url: app.url }])
  for (const [path, where] of [['/app/settings/members', 'members-table'], ['/app/settings/api-keys', 'api-keys-table']] as const) {
    await openPage(page, app.url, path)
    const moments = page.getByTestId(where).locator('time:visible')
    await expect(moments.first()).toBeVisible()
    for (const moment of await moments.all()) {
      await expect(moment).toHaveText(/^(now|\d+ minutes? ago)$/)
      const iso = (await moment.getAttribute('datetime'))!
      expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      // the hover: the full date and time of that moment
      const title = (await moment.getAttribute('title'))!
      expect(title).toContain(String(new Date(iso).getUTCFullYear()))
      expect(title).toMatch(/\d{1,2}:\d{2}/)
    }
  }
  await page.context().close()
})

test('an owner sets how long the activity log and the API log are kept in Settings > General', async ({ browser }) => {
  const page = await signedIn(browser)
  await openPage(page, app.url, '/app/settings')
  await page.getByLabel('Activity log kept for (days)').fill('14')
  await page.getByLabel('API log kept for (days)').fill('7')
  await page.getByRole('button', { name: 'Save changes' }).click()
  await expect(page.getByText('Team settings saved', { exact: true })).toBeVisible()
  const { rows } = await app.db.query('select activity_retention_days, api_log_retention_days from public.teams where id = $1', [teamId])
  expect(rows[0]).toEqual({ activity_retention_days: 14, api_log_retention_days: 7 })
  // the page shows them after a reload; an empty activity retention keeps every entry
  await openPage(page, app.url, '/app/settings')
  await expect(page.getByLabel('API log kept for (days)')).toHaveValue('7')
  await page.getByLabel('Activity log kept for (days)').fill('')
  await page.getByRole('button', { name: 'Save changes' }).click()
  await expect.poll(async () => (await app.db.query('select activity_retention_days from public.teams where id = $1', [teamId])).rows[0].activity_retention_days).toBeNull()
  // the API log keeps at most 90 days: a longer time is brought back to 90
  await page.getByLabel('API log kept for (days)').fill('365')
  await page.getByLabel('API log kept for (days)').blur()
  await expect(page.getByLabel('API log kept for (days)')).toHaveValue('90')
  await page.context().close()
})

test('pages loaded directly hydrate without a mismatch', async ({ browser }) => {
  const page = await signedIn(browser)
  const messages: string[] = []
  page.on('console', message => messages.push(`${message.type()}: ${message.text()}`))
  for (const path of ['/app/data/tasks/new', '/app/settings/api-log', '/app/settings/api-keys', `/app/settings/api-keys/${keyId}`, '/app/settings/members', '/app/data/tasks']) {
    messages.length = 0
    await openPage(page, app.url, path)
    expect(messages.filter(text => /hydration/i.test(text)), path).toEqual([])
  }
  await page.context().close()
})
