import { expect, test } from '@playwright/test'
import type { TestApp } from '../support/app'
import { appForSpec, e2ePassword, openPage, signInPage, teamWithMember } from '../support/browser'
import { addMember, createTeam, signUp, uniqueEmail } from '../support/http'

const password = e2ePassword
let app: TestApp
appForSpec((started) => {
  app = started
})

test('a new user signs up, creates a team, renames it and sees the rename in Activity', async ({ page }) => {
  const pageErrors: string[] = []
  page.on('pageerror', error => pageErrors.push(error.message))
  await page.emulateMedia({ colorScheme: 'light' })
  await openPage(page, app.url, '/signup')
  await page.getByLabel('Name').fill('Ada Lovelace')
  await page.getByLabel('E-mail').fill(uniqueEmail('ada'))
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Create account' }).click()

  await expect(page).toHaveURL(`${app.url}/app`)
  await expect(page.getByText('Create your first team')).toBeVisible()
  await page.screenshot({ path: test.info().outputPath('first-team-light.png') })
  await page.getByRole('button', { name: 'Create team' }).click()
  const dialog = page.getByRole('dialog')
  await dialog.getByLabel('Team name').fill('Analytical Engines')
  await dialog.getByRole('button', { name: 'Create team' }).click()
  await expect(dialog).toBeHidden()
  await expect(page.getByTestId('team-switcher')).toContainText('Analytical Engines')

  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Settings' }).click()
  await expect(page).toHaveURL(`${app.url}/app/settings`)
  const teamName = page.getByLabel('Team name')
  await expect(teamName).toHaveValue('Analytical Engines')
  await teamName.fill('Difference Engines')
  await page.getByRole('button', { name: 'Save changes' }).click()
  await expect(page.getByText('Team settings saved', { exact: true })).toBeVisible()
  await expect(page.getByTestId('team-switcher')).toContainText('Difference Engines')
  await page.screenshot({ path: test.info().outputPath('settings-light.png'), fullPage: true })

  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Activity' }).click()
  await expect(page).toHaveURL(`${app.url}/app/activity`)
  const rename = page.getByTestId('activity-table').locator('tbody tr')
    .filter({ hasText: 'teams' }).filter({ hasText: 'update' })
  await expect(rename).toHaveCount(1)
  await expect(rename).toContainText('Ada Lovelace')
  await expect(rename.getByText('web', { exact: true })).toBeVisible()
  await rename.getByRole('button', { name: 'Show changes' }).click()
  const changes = page.getByTestId('activity-changes')
  await expect(changes).toContainText('name')
  await expect(changes.locator('del')).toHaveText('Analytical Engines')
  await expect(changes.locator('ins')).toHaveText('Difference Engines')

  // the filters narrow the list: the team's creation is an insert
  await page.getByTestId('filter-action').click()
  await page.getByRole('option', { name: 'insert' }).click()
  await expect(page.getByTestId('activity-table').locator('tbody tr').filter({ hasText: 'update' })).toHaveCount(0)
  await expect(page.getByTestId('activity-table').locator('tbody tr').filter({ hasText: 'teams' })).toHaveCount(1)
  await page.getByTestId('filter-source').click()
  await page.getByRole('option', { name: 'api' }).click()
  await expect(page.getByText('No entries match these filters')).toBeVisible()
  await page.getByRole('button', { name: 'Clear filters' }).first().click()
  await expect(rename).toHaveCount(1)

  await page.getByRole('button', { name: 'Switch to dark mode' }).click()
  await expect(page.locator('html')).toHaveClass(/dark/)
  await rename.getByRole('button', { name: 'Show changes' }).click()
  await page.screenshot({ path: test.info().outputPath('activity-dark.png'), fullPage: true })

  await page.getByTestId('user-menu').click()
  await page.getByRole('menuitem', { name: 'Sign out', exact: true }).click()
  await expect(page).toHaveURL(`${app.url}/login`)
  await openPage(page, app.url, '/app/settings')
  await expect(page).toHaveURL(`${app.url}/login?redirect=/app/settings`)
  expect(pageErrors).toEqual([])
})

test('a signed-out visit to Activity goes to sign-in and back; the list pages by 25 and follows the team switcher', async ({ page }) => {
  const owner = await signUp(app, { email: uniqueEmail('grace'), password, name: 'Grace Hopper' })
  const teamId = await createTeam(owner, 'Compilers')
  for (let round = 1; round <= 30; round++) {
    const renamed = await owner.patch(`/api/teams/${teamId}`, { name: `Compilers ${round}` })
    expect(renamed.status).toBe(200)
  }
  const other = await signUp(app, { email: uniqueEmail('other') })
  const otherTeamId = await createTeam(other, 'Other team')
  await addMember(app, otherTeamId, owner, 'member')

  await openPage(page, app.url, '/app/activity')
  await expect(page).toHaveURL(`${app.url}/login?redirect=/app/activity`)
  await page.getByLabel('E-mail').fill(owner.user!.email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await expect(page).toHaveURL(`${app.url}/app/activity`)

  // 30 renames, plus the team's and its owner's inserts
  await expect(page.getByText('32 entries')).toBeVisible()
  const rows = page.getByTestId('activity-table').locator('tbody tr')
  await expect(rows).toHaveCount(25)
  await expect(rows.first()).toContainText('Grace Hopper')
  await page.getByRole('button', { name: 'Page 2' }).click()
  await expect(rows).toHaveCount(7)
  await expect(rows.filter({ hasText: 'insert' })).toHaveCount(2)
  // the page and the filters are kept in the address
  await expect(page).toHaveURL(`${app.url}/app/activity?page=2`)
  await openPage(page, app.url, '/app/activity?action=insert&table=team_members')
  await expect(rows).toHaveCount(1)
  await expect(page.getByLabel('Filter by table')).toContainText('team_members')

  // in the other team Grace is a member, who may not see the activity
  await page.getByTestId('team-switcher').click()
  await page.getByRole('menuitemcheckbox', { name: /Other team/ }).click()
  await expect(page).toHaveURL(`${app.url}/app`)
  await expect(page.getByTestId('team-switcher')).toContainText('Other team')
})

test('a member sees neither the API Keys tab nor Activity, and is sent away from both pages', async ({ page }) => {
  const { member } = await teamWithMember(app, { owner: 'Test User', team: 'Shared team', member: 'Mary Member' })

  await signInPage(page, app.url, member.user!.email, '/app/settings')
  await expect(page).toHaveURL(`${app.url}/app/settings`)
  const tabs = page.getByRole('navigation', { name: 'Settings sections' })
  await expect(tabs.getByRole('link', { name: 'Members' })).toBeVisible()
  await expect(tabs.getByRole('link', { name: 'API Keys' })).toHaveCount(0)
  await expect(page.getByText('Only owners and admins can change these settings.')).toBeVisible()
  await expect(page.getByLabel('Team name')).toBeDisabled()
  await expect(page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Activity' })).toHaveCount(0)

  await page.goto(`${app.url}/app/settings/api-keys`)
  await expect(page).toHaveURL(`${app.url}/app/settings`)
  await page.goto(`${app.url}/app/activity`)
  await expect(page).toHaveURL(`${app.url}/app`)

  await page.goto(`${app.url}/app/settings/members`)
  // a member's only row action is leaving; the owner's row offers none
  const rowMenus = page.getByRole('button', { name: /^Actions for / })
  await expect(rowMenus).toHaveCount(1)
  await rowMenus.click()
  await expect(page.getByRole('menuitem', { name: 'Leave team' })).toBeVisible()
  await expect(page.getByRole('menuitem', { name: 'Remove' })).toHaveCount(0)
})

test('an owner changes a member\'s role and removes them after confirming', async ({ page }) => {
  const { owner, teamId, member } = await teamWithMember(app, { owner: 'Olive Owner', team: 'Role team', member: 'Moe Member' })

  await signInPage(page, app.url, owner.user!.email, '/app/settings/members')
  await expect(page).toHaveURL(`${app.url}/app/settings/members`)
  await page.emulateMedia({ colorScheme: 'dark' })
  await page.screenshot({ path: test.info().outputPath('members-dark.png'), fullPage: true })
  await page.getByRole('combobox', { name: 'Role of Moe Member' }).click()
  await page.getByRole('option', { name: 'Admin' }).click()
  // nothing changes until the change is confirmed
  const roleDialog = page.getByRole('dialog', { name: 'Make Moe Member an admin?' })
  await expect(roleDialog).toBeVisible()
  const before = await app.db.query('select role from public.team_members where team_id = $1 and user_id = $2', [teamId, member.user!.id])
  expect(before.rows).toEqual([{ role: 'member' }])
  await roleDialog.getByRole('button', { name: 'Change role' }).click()
  await expect(page.getByText('Moe Member is now an admin', { exact: true })).toBeVisible()
  const roles = await app.db.query('select role from public.team_members where team_id = $1 and user_id = $2', [teamId, member.user!.id])
  expect(roles.rows).toEqual([{ role: 'admin' }])

  await page.getByRole('button', { name: 'Actions for Moe Member' }).click()
  await page.getByRole('menuitem', { name: 'Remove' }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Remove member' }).click()
  await expect(page.getByText('Moe Member was removed', { exact: true })).toBeVisible()
  await expect(page.locator('tbody')).not.toContainText('Moe Member')
  const left = await app.db.query('select 1 from public.team_members where team_id = $1 and user_id = $2', [teamId, member.user!.id])
  expect(left.rowCount).toBe(0)

  // the last owner is offered neither a role select nor "Leave team" (the server would refuse both)
  await expect(page.locator('tbody tr')).toHaveCount(1)
  await expect(page.getByRole('combobox', { name: 'Role of Olive Owner' })).toHaveCount(0)
  await expect(page.getByRole('button', { name: 'Actions for Olive Owner' })).toHaveCount(0)
})

test('a user changes their password, which signs out their other browser, then signs out everywhere after confirming', async ({ page, browser }) => {
  const email = uniqueEmail('sessions')
  await signUp(app, { email, password, name: 'Sid Sessions' })
  // another browser, signed in with the same account
  const other = await browser.newContext()
  const otherPage = await other.newPage()
  await signInPage(otherPage, app.url, email, '/app')
  await expect(otherPage).toHaveURL(`${app.url}/app`)

  await signInPage(page, app.url, email, '/app')
  await expect(page).toHaveURL(`${app.url}/app`)
  await page.getByTestId('user-menu').click()
  await page.getByRole('menuitem', { name: 'Change password' }).click()
  const form = page.getByRole('dialog', { name: 'Change password' })
  await form.getByLabel('Current password').fill('not my password')
  await form.getByLabel('New password').fill('a new password 2')
  await form.getByRole('button', { name: 'Change password' }).click()
  await expect(form.getByText('current_password: is wrong')).toBeVisible()
  await form.getByLabel('Current password').fill(password)
  await form.getByRole('button', { name: 'Change password' }).click()
  await expect(form).toBeHidden()
  // the other browser and the sign-up's own session
  await expect(page.getByText('Password changed; 2 other sessions signed out', { exact: true })).toBeVisible()
  // focus is back on the menu that opened the form
  await expect(page.getByTestId('user-menu')).toBeFocused()

  // the other browser is signed out on its next request
  await openPage(otherPage, app.url, '/app/settings')
  await expect(otherPage).toHaveURL(`${app.url}/login?redirect=/app/settings`)
  await other.close()

  const cookies = await page.context().cookies()
  await page.getByTestId('user-menu').click()
  await page.getByRole('menuitem', { name: 'Sign out everywhere' }).click()
  const confirm = page.getByRole('dialog', { name: 'Sign out everywhere?' })
  await confirm.getByRole('button', { name: 'Cancel' }).click()
  await expect(confirm).toBeHidden()
  await expect(page).toHaveURL(`${app.url}/app`)
  await page.getByTestId('user-menu').click()
  await page.getByRole('menuitem', { name: 'Sign out everywhere' }).click()
  await page.getByRole('dialog', { name: 'Sign out everywhere?' }).getByRole('button', { name: 'Sign out everywhere' }).click()
  await expect(page).toHaveURL(`${app.url}/login`)
  // the cookie this browser held before is worth nothing now
  const session = cookies.find(cookie => cookie.name === 'nuxt-session')!
  const replay = await fetch(`${app.url}/api/auth/me`, { headers: { cookie: `${session.name}=${session.value}` } })
  expect(replay.status).toBe(401)
})
