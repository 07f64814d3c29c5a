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
