import { expect, test, type Page } from '@playwright/test'
import type { TestApp } from '../support/app'
import { appForSpec, e2ePassword, openPage, ownerWithTeam, signInPage } from '../support/browser'
import { addMember, signUp, uniqueEmail } from '../support/http'

// What a careful user sees on the screens: sign-in before the script has loaded, one date format
// in the reader's locale, the record History in the record page's words, settings tables inside
// their cards, one primary colour, and chart colours that can be told apart.
let app: TestApp
appForSpec((started) => {
  app = started
}, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })

test.describe('signing in before the page\'s script runs', () => {
  test.use({ javaScriptEnabled: false })

  test('the form posts itself, signs in and opens the page asked for', async ({ page }) => {
    const { owner } = await ownerWithTeam(app, { owner: 'Noah Noscript', team: 'Plain Team' })
    await page.goto(`${app.url}/login?redirect=${encodeURIComponent('/app/settings')}`)
    await page.getByLabel('E-mail').fill(owner.user!.email)
    await page.getByLabel('Password').fill(e2ePassword)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await expect(page).toHaveURL(`${app.url}/app/settings`)
  })

  test('a wrong password comes back to the form, says so and keeps the address', async ({ page }) => {
    const { owner } = await ownerWithTeam(app, { owner: 'Wren Wrong', team: 'Wrong Team' })
    await page.goto(`${app.url}/login`)
    await page.getByLabel('E-mail').fill(owner.user!.email)
    await page.getByLabel('Password').fill('not the password')
    await page.getByLabel('Password').press('Enter')
    await expect(page).toHaveURL(/\/login\?/)
    await expect(page.getByText('Wrong e-mail or password')).toBeVisible()
    await expect(page.getByLabel('E-mail')).toHaveValue(owner.user!.email)
    // the password never travels in the address
    expect(page.url()).not.toContain('not%20the%20password')
    expect(page.url()).not.toContain('password=')
  })

  test('a form posted from another site signs nobody in', async ({ request }) => {
    const { owner } = await ownerWithTeam(app, { owner: 'Cora Cross', team: 'Cross Team' })
    const answer = await request.post(`${app.url}/auth/sign-in`, {
      form: { email: owner.user!.email, password: e2ePassword },
      headers: { origin: 'https://evil.example' },
      maxRedirects: 0,
    })
    expect(answer.status()).toBe(303)
    expect(answer.headers().location).toContain('error=')
    expect(answer.headers()['set-cookie'] ?? '').not.toContain('nuxt-session=Fe')
  })
})

/** The date and time a reader of `locale` in UTC reads for `iso`, as the app must write it. */
const expected = (iso: string, locale: string) => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso))

test.describe('one date format, the reader\'s', () => {
  test.use({ locale: 'en-US', timezoneId: 'UTC' })

  test('the record page, its History, deliveries and the failing banner write dates alike, and History names fields as the page does', async ({ page }) => {
    const { owner, teamId } = await ownerWithTeam(app, { owner: 'Dora Dates', team: 'Date Team' })
    const project = (await owner.post(`/api/teams/${teamId}/records/projects`, { name: 'Launch' })).body
    const task = (await owner.post(`/api/teams/${teamId}/records/tasks`, { title: 'Dated', project_id: project.id })).body
    await owner.patch(`/api/teams/${teamId}/records/tasks/${task.id}`, { title: 'Dated again' })
    // created a week earlier, so that each date on the page is told apart from the other
    await app.db.query(`update public.tasks set created_at = created_at - interval '7 days' where id = $1`, [task.id])
    const { rows: [saved] } = await app.db.query(`select to_json(created_at) #>> '{}' as created_at, to_json(updated_at) #>> '{}' as updated_at from public.tasks where id = $1`, [task.id])

    await signInPage(page, app.url, owner.user!.email, `/app/data/tasks/${task.id}`)
    const fields = page.getByTestId('record-fields')
    // updated_at (a timestamp to the millisecond) is written as every other moment, never raw: by
    // the app's one rule, relative within a day (updated just now) with the full date and time on
    // hover, else the full date and time (created a week ago)
    await expect(fields.locator(`time[title="${expected(saved.updated_at, 'en-US')}"]`)).not.toHaveCount(0)
    await expect(fields).toContainText(expected(saved.created_at, 'en-US'))
    await expect(fields).not.toContainText(/\d{4}-\d{2}-\d{2}T/)
    const history = page.getByTestId('record-history')
    await expect(history).toContainText('Dora Dates created it')
    // field labels and names, not columns and ids; no "empty"
    await expect(history.getByText('Project', { exact: true }).first()).toBeVisible()
    await expect(history).toContainText('Launch')
    await expect(history).not.toContainText('project_id')
    await expect(history).not.toContainText('empty')
    await expect(history).not.toContainText(project.id)

    // deliveries follow the one rule; the failing banner's sentence names the full date and time
    await owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url: 'http://127.0.0.1:9/hook', events: ['*'] })
    const endpoint = (await owner.get(`/api/teams/${teamId}/webhooks/endpoints`)).body[0]
    await app.db.query(`update public.webhook_endpoints set failing_since = '2026-11-20T08:30:00Z' where id = $1`, [endpoint.id])
    await owner.post(`/api/teams/${teamId}/records/tasks`, { title: 'Sends an event' })
    await openPage(page, app.url, '/app/settings/webhooks')
    await expect(page.getByText(`Every attempt has failed since ${expected('2026-11-20T08:30:00Z', 'en-US')}`)).toBeVisible()
    await page.getByRole('button', { name: 'Deliveries' }).first().click()
    const { rows: [delivery] } = await app.db.query(`select to_json(created_at) #>> '{}' as created_at from public.webhook_deliveries where endpoint_id = $1 limit 1`, [endpoint.id])
    await page.setViewportSize({ width: 1440, height: 900 })
    // a delivery made just now: relative, with the full date and time on hover, as every moment
    await expect(page.getByTestId('webhook-deliveries').first().locator(`time[title="${expected(delivery.created_at, 'en-US')}"]`)).not.toHaveCount(0)
  })
})

test.describe('in another locale', () => {
  test.use({ locale: 'de-DE', timezoneId: 'UTC' })

  test('the record page writes its dates the German way', async ({ page }) => {
    const { owner, teamId } = await ownerWithTeam(app, { owner: 'Greta Datum', team: 'Datum Team' })
    const task = (await owner.post(`/api/teams/${teamId}/records/tasks`, { title: 'Datiert' })).body
    await signInPage(page, app.url, owner.user!.email, `/app/data/tasks/${task.id}`)
    // created just now: relative on the page, the full German date and time on hover
    await expect(page.getByTestId('record-fields').locator(`time[title="${expected(task.created_at, 'de-DE')}"]`)).not.toHaveCount(0)
  })
})

/** How far the widest table (or the page) reaches past its box, in px. */
function overflowOf(page: Page, testId: string) {
  return page.evaluate((id) => {
    const root = document.scrollingElement!
    const tables = [...document.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`)]
    return { page: root.scrollWidth - root.clientWidth, table: Math.max(0, ...tables.map(table => table.scrollWidth - table.clientWidth)) }
  }, testId)
}

test('settings tables stay inside their boxes at 390, 820 and 1440 px', async ({ page }) => {
  const { owner, teamId } = await ownerWithTeam(app, { owner: 'Maximilian Featherstonehaugh-Montgomery', team: 'Boxed Team' })
  const member = await signUp(app, { email: uniqueEmail('a-very-long-address-for-the-members-table'), name: 'Bartholomew Longname-Wetherington' })
  await addMember(app, teamId, member, 'admin')
  await owner.post(`/api/teams/${teamId}/webhooks/endpoints`, { url: 'http://127.0.0.1:9/a/rather/long/path/for/the/endpoint', events: ['*'] })
  for (let i = 0; i < 3; i++) await owner.post(`/api/teams/${teamId}/records/tasks`, { title: `Event ${i}` })
  await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'A key with a long name for the warehouse sync' })

  await signInPage(page, app.url, owner.user!.email, '/app/settings/members')
  await expect(page).toHaveURL(`${app.url}/app/settings/members`)
  for (const [path, testId] of [['/app/settings/members', 'members-table'], ['/app/settings/webhooks', 'webhook-deliveries'], ['/app/settings/api-keys', 'api-keys-table']] as const) {
    await openPage(page, app.url, path)
    if (testId === 'webhook-deliveries') await page.getByRole('button', { name: 'Deliveries' }).first().click()
    await expect(page.getByTestId(testId).first()).toBeVisible()
    for (const width of [390, 820, 1440]) {
      await page.setViewportSize({ width, height: 900 })
      await expect(page.getByTestId(testId).locator('tbody tr').first()).toBeVisible()
      expect(await overflowOf(page, testId), `${path} at ${width} px`).toEqual({ page: 0, table: 0 })
      // every button of the table is on the screen
      for (const button of await page.getByTestId(testId).first().getByRole('button').all()) {
        if (!await button.isVisible()) continue
        const box = (await button.boundingBox())!
        expect(box.x + box.width, `${path} at ${width} px`).toBeLessThanOrEqual(width)
      }
      await page.screenshot({ path: `test-results/settings-${testId}-${width}.png`, fullPage: true })
    }
  }
})

test('primary buttons have one colour, and the overview tells chat from mcp', async ({ page }) => {
  const { owner } = await ownerWithTeam(app, { owner: 'Cole Colour', team: 'Colour Team' })
  await signInPage(page, app.url, owner.user!.email, '/app/settings/webhooks')
  const background = (role: 'button' | 'link', name: string) => page.getByRole(role, { name }).first().evaluate(element => getComputedStyle(element).backgroundColor)
  const addEndpoint = await background('button', 'Add endpoint')
  await openPage(page, app.url, '/app/settings/api-keys')
  const createKey = await background('button', 'Create Key')
  await openPage(page, app.url, '/app/data/tasks')
  const newTask = await background('link', 'New task')
  expect([addEndpoint, newTask]).toEqual([createKey, createKey])

  await openPage(page, app.url, '/app')
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    // the hue of each source's colour, as the browser paints it
    const hues = await page.evaluate(() => {
      const canvas = document.createElement('canvas')
      const context = canvas.getContext('2d', { willReadFrequently: true })!
      const hue = (color: string) => {
        const probe = document.createElement('span')
        probe.style.color = color
        document.body.append(probe)
        context.clearRect(0, 0, 1, 1)
        context.fillStyle = getComputedStyle(probe).color
        probe.remove()
        context.fillRect(0, 0, 1, 1)
        const [r, g, b] = [...context.getImageData(0, 0, 1, 1).data].map(v => v / 255) as [number, number, number]
        const max = Math.max(r, g, b)
        const min = Math.min(r, g, b)
        const d = max - min
        const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4
        return (h * 60 + 360) % 360
      }
      const legend = [...document.querySelectorAll<HTMLElement>('[data-series-color]')]
      return Object.fromEntries(legend.map(item => [item.dataset.seriesName, hue(item.dataset.seriesColor!)]))
    })
    const apart = Math.abs(hues.chat! - hues.mcp!)
    expect(Math.min(apart, 360 - apart), `${scheme}: chat ${hues.chat}, mcp ${hues.mcp}`).toBeGreaterThanOrEqual(60)
  }
})
