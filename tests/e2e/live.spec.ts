import { expect, test } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { e2ePassword, signInPage } from '../support/browser'
import { KeyClient, addMember, createTeam, signUp, uniqueEmail, type Client } from '../support/http'
import { axeOn, seriousViolations } from '../support/axe'

// Live pages: what others change shows on an open page without a reload, and a record being
// edited that someone else changes says who did and offers their version instead of overwriting it.
let app: TestApp
let owner: Client
let member: Client
let teamId: string
let key: KeyClient

test.beforeAll(async () => {
  app = await startApp()
  owner = await signUp(app, { email: uniqueEmail('olive'), password: e2ePassword, name: 'Olive Owner' })
  teamId = await createTeam(owner, 'Live Team')
  member = await signUp(app, { email: uniqueEmail('mia'), password: e2ePassword, name: 'Mia Member' })
  await addMember(app, teamId, member, 'member')
  key = new KeyClient(app, (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Script' })).body.key)
})

test.afterAll(async () => {
  await app?.stop()
})

test('a row created, changed and deleted by a key shows on an open tasks page without a reload', async ({ page }) => {
  await signInPage(page, app.url, member.user!.email, '/app/data/tasks')
  await expect(page).toHaveURL(`${app.url}/app/data/tasks`)
  const rows = page.getByTestId('data-table').locator('tbody tr')
  // a mark that a reload would wipe
  await page.evaluate(() => Object.assign(window, { liveMark: 'not reloaded' }))

  const created = await key.post('/api/v1/tasks', { title: 'Written by a script' })
  expect(created.status).toBe(201)
  await expect(rows.filter({ hasText: 'Written by a script' })).toHaveCount(1)
  await key.patch(`/api/v1/tasks/${created.body.id}`, { title: 'Renamed by the script' })
  await expect(rows.filter({ hasText: 'Renamed by the script' })).toHaveCount(1)
  await key.delete(`/api/v1/tasks/${created.body.id}`)
  await expect(rows.filter({ hasText: 'Renamed by the script' })).toHaveCount(0)
  // no reload happened: the page followed the changes
  expect(await page.evaluate(() => (window as unknown as { liveMark?: string }).liveMark)).toBe('not reloaded')
})

test('a record being edited that someone else changes says who, keeps what was typed, and offers their version', async ({ page }) => {
  const task = await owner.post(`/api/teams/${teamId}/records/tasks`, { title: 'Plan the offsite' })
  expect(task.status).toBe(201)
  await signInPage(page, app.url, member.user!.email, `/app/data/tasks/${task.body.id}`)
  await page.getByRole('button', { name: 'Edit' }).click()
  const form = page.getByTestId('record-form')
  await form.getByLabel('Title').fill('Plan the offsite (Mia)')

  expect((await owner.patch(`/api/teams/${teamId}/records/tasks/${task.body.id}`, { title: 'Plan the offsite in May' })).status).toBe(200)
  const notice = page.getByTestId('record-remote-change')
  await expect(notice).toContainText('Olive Owner changed this record while you were editing it')
  // what was typed is still there, and nothing was saved over their change
  await expect(form.getByLabel('Title')).toHaveValue('Plan the offsite (Mia)')
  const { rows } = await app.db.query('select title from public.tasks where id = $1', [task.body.id])
  expect(rows[0].title).toBe('Plan the offsite in May')

  // the notice reads well at a phone's, a tablet's and a desktop's width, light and dark
  for (const width of [390, 820, 1440]) {
    for (const scheme of ['light', 'dark'] as const) {
      await page.setViewportSize({ width, height: 900 })
      await page.emulateMedia({ colorScheme: scheme })
      await expect(notice.getByRole('button', { name: 'Load their version' })).toBeInViewport()
      expect(await seriousViolations(axeOn(page).include('[data-testid="record-remote-change"]')), `${width} ${scheme}`).toEqual([])
    }
  }
  await notice.getByRole('button', { name: 'Load their version' }).focus()
  await page.keyboard.press('Enter')
  await expect(page.getByTestId('record-fields')).toContainText('Plan the offsite in May')
  await expect(notice).toHaveCount(0)
})

test('two people edit one task: the second one\'s Save after the first one\'s keeps what was typed beside their values until it is applied or dropped', async ({ browser }) => {
  const task = await owner.post(`/api/teams/${teamId}/records/tasks`, { title: 'Order the banners', status: 'todo' })
  expect(task.status).toBe(201)
  const path = `/app/data/tasks/${task.body.id}`
  const oliveContext = await browser.newContext()
  const miaContext = await browser.newContext()
  try {
    const olive = await oliveContext.newPage()
    const mia = await miaContext.newPage()
    await signInPage(olive, app.url, owner.user!.email, path)
    await signInPage(mia, app.url, member.user!.email, path)
    for (const page of [olive, mia]) {
      await expect(page.getByTestId('record-fields')).toContainText('Order the banners')
      await page.getByRole('button', { name: 'Edit' }).click()
    }
    const oliveForm = olive.getByTestId('record-form')
    const miaForm = mia.getByTestId('record-form')
    await miaForm.getByLabel('Title').fill('Order the banners (blue)')
    await oliveForm.getByLabel('Title').fill('Order the banners by Friday')
    await oliveForm.getByRole('button', { name: 'Save' }).click()
    await expect(olive.getByTestId('record-fields')).toContainText('Order the banners by Friday')
    await expect(mia.getByTestId('record-remote-change')).toContainText('Olive Owner changed this record while you were editing it')

    // Mia saves anyway: refused, and what she typed stays on the page beside Olive's value
    await miaForm.getByRole('button', { name: 'Save' }).click()
    const conflict = mia.getByTestId('record-conflict')
    await expect(conflict).toContainText('theirs Order the banners by Friday')
    await expect(conflict).toContainText('yours Order the banners (blue)')
    await expect(miaForm.getByLabel('Title')).toHaveValue('Order the banners (blue)')
    expect((await app.db.query('select title from public.tasks where id = $1', [task.body.id])).rows[0].title).toBe('Order the banners by Friday')

    // she applies hers over theirs
    await miaForm.getByRole('button', { name: 'Save' }).click()
    await expect(mia.getByTestId('record-fields')).toContainText('Order the banners (blue)')
    await expect(conflict).toHaveCount(0)
    expect((await app.db.query('select title from public.tasks where id = $1', [task.body.id])).rows[0].title).toBe('Order the banners (blue)')

    // once more, and this time she drops hers: the page shows theirs
    await mia.getByRole('button', { name: 'Edit' }).click()
    await miaForm.getByLabel('Title').fill('Order the banners (red)')
    expect((await owner.patch(`/api/teams/${teamId}/records/tasks/${task.body.id}`, { title: 'Order the banners today' })).status).toBe(200)
    await expect(mia.getByTestId('record-remote-change')).toBeVisible()
    await miaForm.getByRole('button', { name: 'Save' }).click()
    await expect(conflict).toContainText('yours Order the banners (red)')
    await expect(miaForm.getByLabel('Title')).toHaveValue('Order the banners (red)')
    await conflict.getByRole('button', { name: 'Drop my changes' }).click()
    await expect(mia.getByTestId('record-fields')).toContainText('Order the banners today')
    expect((await app.db.query('select title from public.tasks where id = $1', [task.body.id])).rows[0].title).toBe('Order the banners today')
  }
  finally {
    await oliveContext.close()
    await miaContext.close()
  }
})

test('a list subscribes before its first fetch: a change made between that fetch and a slow stream is shown', async ({ page }) => {
  const task = await owner.post(`/api/teams/${teamId}/records/tasks`, { title: 'Read on the record page' })
  expect(task.status).toBe(201)
  await signInPage(page, app.url, member.user!.email, `/app/data/tasks/${task.body.id}`)
  await expect(page.getByTestId('record-fields')).toContainText('Read on the record page')

  // the list's first fetch is answered by the server, then a row is written before the page gets
  // the answer; any new event stream is held (a stream slow to open), so only a subscription
  // made before the fetch can tell the list about the row
  let heldFetch = true
  await page.route(/\/api\/teams\/[^/]+\/records\/tasks\?/, async (route) => {
    if (!heldFetch) return route.continue()
    heldFetch = false
    const answer = await route.fetch()
    expect((await owner.post(`/api/teams/${teamId}/records/tasks`, { title: 'Written between fetch and stream' })).status).toBe(201)
    await route.fulfill({ response: answer })
  })
  const heldStreams: (() => void)[] = []
  await page.route(/\/events\/stream/, route => new Promise<void>((resolve) => {
    heldStreams.push(() => void route.continue().then(resolve, resolve))
  }))
  try {
    await page.getByRole('link', { name: 'Back to tasks' }).click()
    await expect(page).toHaveURL(`${app.url}/app/data/tasks`)
    const rows = page.getByTestId('data-table').locator('tbody tr')
    await expect(rows.filter({ hasText: 'Read on the record page' })).toHaveCount(1)
    await expect(rows.filter({ hasText: 'Written between fetch and stream' })).toHaveCount(1, { timeout: 8_000 })
  }
  finally {
    for (const release of heldStreams) release()
    await page.unrouteAll({ behavior: 'ignoreErrors' })
  }
})
