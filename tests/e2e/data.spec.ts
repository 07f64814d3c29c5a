import { readFileSync } from 'node:fs'
import { expect, test } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { e2ePassword, openPage, signInPage, useColorScheme } from '../support/browser'
import { addMember, createTeam, signUp, uniqueEmail, type Client } from '../support/http'
import { axeOn, seriousViolations } from '../support/axe'

let app: TestApp
let owner: Client
let admin: Client
let member: Client
let teamId: string

test.beforeAll(async () => {
  app = await startApp()
  owner = await signUp(app, { email: uniqueEmail('olive'), password: e2ePassword, name: 'Olive Owner' })
  teamId = await createTeam(owner, 'Data Team')
  admin = await signUp(app, { email: uniqueEmail('adam'), password: e2ePassword, name: 'Adam Admin' })
  member = await signUp(app, { email: uniqueEmail('mia'), password: e2ePassword, name: 'Mia Member' })
  await addMember(app, teamId, admin, 'admin')
  await addMember(app, teamId, member, 'member')
  const project = await owner.post(`/api/teams/${teamId}/records/projects`, { name: 'Launch' })
  for (const [title, status] of [['Write the plan', 'todo'], ['Book the venue', 'todo'], ['Order shirts', 'done'], ['Draft the budget', 'in_progress']]) {
    const body = { title, status, project_id: project.body.id, ...(status === 'done' ? { completed_at: new Date().toISOString() } : {}) }
    const answer = await owner.post(`/api/teams/${teamId}/records/tasks`, body)
    expect(answer.status).toBe(201)
  }
})

test.afterAll(async () => {
  await app?.stop()
})

test('a member filters tasks, edits one, and sees the change in its history; an admin sees it in Activity and exports the log', async ({ page }) => {
  const pageErrors: string[] = []
  page.on('pageerror', error => pageErrors.push(error.message))
  await signInPage(page, app.url, member.user!.email, '/app')
  await expect(page).toHaveURL(`${app.url}/app`)
  await expect(page.getByRole('region', { name: 'Records' })).toContainText('4 records')
  await expect(page.getByRole('figure')).toContainText('Todo: 2, In progress: 1, Done: 1')

  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Tasks' }).click()
  await expect(page).toHaveURL(`${app.url}/app/data/tasks`)
  const rows = page.getByTestId('data-table').locator('tbody tr')
  await expect(rows).toHaveCount(4)
  // the project is shown by name, linked to its page
  await expect(rows.first().getByRole('link', { name: 'Launch' })).toBeVisible()

  // filter: status is todo
  await page.getByRole('button', { name: 'Filter' }).click()
  await page.getByLabel('Column').click()
  await page.getByRole('option', { name: 'Status' }).click()
  await page.getByLabel('Value').click()
  await page.getByRole('option', { name: 'Todo' }).click()
  await page.getByRole('button', { name: 'Apply filter' }).click()
  await expect(rows).toHaveCount(2)
  await expect(page).toHaveURL(/status=eq\.todo/)
  // and a search on the title
  await page.getByLabel('Search').fill('venue')
  await expect(rows).toHaveCount(1)
  await expect(page).toHaveURL(/search=venue/)
  // the view survives a reload
  await page.reload()
  await expect(rows).toHaveCount(1)

  await rows.first().getByRole('link', { name: 'Book the venue' }).click()
  await expect(page).toHaveURL(new RegExp(`${app.url}/app/data/tasks/[0-9a-f-]{36}$`))
  await expect(page.getByRole('button', { name: 'Delete' })).toHaveCount(0)
  await page.getByRole('button', { name: 'Edit' }).click()
  const form = page.getByTestId('record-form')
  await form.getByLabel('Status').click()
  await page.getByRole('option', { name: 'In progress' }).click()
  await form.getByLabel('Due date').fill('2026-12-24')
  await form.getByRole('button', { name: 'Save' }).click()
  await expect(page.getByTestId('record-fields')).toContainText('In progress')
  const history = page.getByTestId('record-history').locator('li')
  await expect(history.first()).toContainText('Mia Member changed it')
  // History writes the change as the record page does: the field's label, the choice in words
  await expect(history.first().getByText('Status', { exact: true })).toBeVisible()
  await expect(history.first().locator('del').first()).toHaveText('Todo')
  await expect(history.first().locator('ins').first()).toHaveText('In progress')
  expect(pageErrors).toEqual([])

  // the admin answers "who changed this task, from where" in Activity, and exports the log
  await page.context().clearCookies()
  await signInPage(page, app.url, admin.user!.email, '/app/activity')
  await expect(page).toHaveURL(`${app.url}/app/activity`)
  const change = page.getByTestId('activity-table').locator('tbody tr').filter({ hasText: 'Book the venue' }).filter({ hasText: 'update' })
  await expect(change).toContainText('Mia Member')
  await expect(change).toContainText('web')
  // its changes are written as the record page writes them: field labels, choices in words, dates formatted
  await change.getByRole('button', { name: 'Show changes' }).click()
  const changes = page.getByTestId('activity-changes')
  await expect(changes.getByText('Status', { exact: true })).toBeVisible()
  await expect(changes.getByText('Due date', { exact: true })).toBeVisible()
  await expect(changes).not.toContainText('due_date')
  await expect(changes.locator('del').first()).toHaveText('Todo')
  await expect(changes.locator('ins').first()).toHaveText('In progress')
  await expect(changes).not.toContainText('2026-12-24')
  await page.getByTestId('activity-export').click()
  const download = page.waitForEvent('download')
  await page.getByRole('menuitem', { name: /CSV/ }).click()
  const file = await download
  expect(file.suggestedFilename()).toMatch(/^activity-\d{4}-\d{2}-\d{2}\.csv$/)
  const csv = readFileSync((await file.path())!, 'utf8')
  expect(csv.split('\r\n')[0]).toContain('actor_name')
  expect(csv).toContain('Book the venue')
  expect(csv).toContain('Mia Member')
})

test('a member is not offered delete, and the server refuses it', async ({ page }) => {
  await signInPage(page, app.url, member.user!.email, '/app/data/projects')
  await expect(page).toHaveURL(`${app.url}/app/data/projects`)
  await page.getByTestId('data-table').getByRole('link', { name: 'Launch' }).click()
  await expect(page.getByRole('button', { name: 'Edit' })).toBeVisible()
  await expect(page.getByRole('button', { name: 'Delete' })).toHaveCount(0)
  const projectId = page.url().split('/').pop()!
  const refused = await page.request.delete(`${app.url}/api/teams/${teamId}/records/projects/${projectId}`, { headers: { origin: app.url } })
  expect(refused.status()).toBe(403)
})

test('an admin creates a record, is warned when someone else changed it meanwhile, and deletes it after confirming', async ({ page }) => {
  await signInPage(page, app.url, admin.user!.email, '/app/data/notes/new')
  await expect(page).toHaveURL(`${app.url}/app/data/notes/new`)
  const form = page.getByTestId('record-form')
  await form.getByLabel('Title').fill('Venue shortlist')
  await form.getByLabel('Body').fill('Hall A, Hall B')
  await form.getByRole('button', { name: 'Create' }).click()
  await expect(page).toHaveURL(new RegExp(`${app.url}/app/data/notes/[0-9a-f-]{36}$`))
  const noteId = page.url().split('/').pop()!
  await expect(page.getByTestId('record-fields')).toContainText('Hall A, Hall B')

  await page.getByRole('button', { name: 'Edit' }).click()
  // someone else saves first
  expect((await owner.patch(`/api/teams/${teamId}/records/notes/${noteId}`, { body: 'Hall C only' })).status).toBe(200)
  await form.getByLabel('Title').fill('Venue choice')
  await form.getByRole('button', { name: 'Save' }).click()
  const conflict = page.getByTestId('record-conflict')
  await expect(conflict).toContainText('Someone else changed this record')
  await expect(conflict).toContainText('Hall C only')
  const { rows } = await app.db.query('select title, body from public.notes where id = $1', [noteId])
  expect(rows[0]).toEqual({ title: 'Venue shortlist', body: 'Hall C only' })
  // what was typed stays in the form until it is dropped
  await expect(form.getByLabel('Title')).toHaveValue('Venue choice')
  await conflict.getByRole('button', { name: 'Drop my changes' }).click()
  await expect(form).toHaveCount(0)

  await page.getByRole('button', { name: 'Delete' }).click()
  const dialog = page.getByRole('dialog')
  await expect(dialog).toContainText('Delete Venue shortlist?')
  await dialog.getByRole('button', { name: 'Delete' }).click()
  await expect(page).toHaveURL(`${app.url}/app/data/notes`)
  expect((await app.db.query('select 1 from public.notes where id = $1', [noteId])).rowCount).toBe(0)
})

// one test per width: each loads three pages, runs axe on each in dark and then light, well inside a test's time on a busy machine
for (const width of [390, 820, 1440]) {
  test(`the overview, data and activity pages have no serious accessibility violation at ${width} px, light and dark`, async ({ page }) => {
    await signInPage(page, app.url, owner.user!.email, '/app/data/tasks')
    await expect(page).toHaveURL(`${app.url}/app/data/tasks`)
    await page.setViewportSize({ width, height: 900 })
    for (const path of ['/app', '/app/data/tasks', '/app/activity']) {
      // loaded in dark, then switched to light (the scheme the rest of this spec loads pages in)
      await page.emulateMedia({ colorScheme: 'dark' })
      await openPage(page, app.url, path)
      await expect(page.getByRole('heading').first()).toBeVisible()
      for (const scheme of ['dark', 'light'] as const) {
        await useColorScheme(page, scheme)
        const serious = await seriousViolations(axeOn(page))
        expect(serious.map(v => `${path} ${width} ${scheme}: ${v.id} ${v.nodes.map(n => n.target.join(' ')).join(', ')}`)).toEqual([])
        await page.screenshot({ path: test.info().outputPath(`${path.replace(/\//g, '_')}-${width}-${scheme}.png`), fullPage: true })
      }
    }
  })
}
