import { expect, test } from '@playwright/test'
import type { TestApp } from '../support/app'
import { appForSpec, ownerWithTeam, signInPage, teamWithMember } from '../support/browser'

let app: TestApp
appForSpec((started) => {
  app = started
})

const callTasks = (key: string) => fetch(`${app.url}/api/v1/tasks`, { headers: { authorization: `Bearer ${key}` } })

test('an owner creates a key, an integration uses it, the owner revokes it and the next call is refused', async ({ page }) => {
  const { owner } = await ownerWithTeam(app, { owner: 'Kim Keys', team: 'Key Team' })

  await signInPage(page, app.url, owner.user!.email, '/app/settings/api-keys')
  await expect(page).toHaveURL(`${app.url}/app/settings/api-keys`)
  await expect(page.getByText('No API keys yet')).toBeVisible()
  await page.screenshot({ path: 'test-results/api-keys-empty.png' })

  await page.getByRole('button', { name: 'Create Key' }).first().click()
  const createDialog = page.getByRole('dialog', { name: 'Create API key' })
  await createDialog.getByRole('button', { name: 'Create key' }).click()
  await expect(createDialog.getByText(/name/i).first()).toBeVisible()
  await createDialog.getByLabel('Name').fill('Nightly sync')
  await page.screenshot({ path: 'test-results/api-keys-create.png' })
  await createDialog.getByRole('button', { name: 'Create key' }).click()

  const secretDialog = page.getByRole('dialog', { name: 'Your new API key' })
  await expect(secretDialog).toBeVisible()
  await expect(secretDialog.getByText('It cannot be seen again')).toBeVisible()
  const key = await secretDialog.getByLabel('API key').inputValue()
  expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/)
  // the modal says how the app names this key: sk_... and its own first 8 characters
  const shownAs = `sk_...${key.slice(0, 8)}`
  await expect(secretDialog.getByTestId('api-key-shown-as')).toHaveText(shownAs)
  await expect(secretDialog).toContainText('sk_... only marks the shown prefix')
  await page.screenshot({ path: 'test-results/api-keys-secret.png' })
  // not dismissible until the key is stored: Escape does nothing and Done is disabled
  await page.keyboard.press('Escape')
  await expect(secretDialog).toBeVisible()
  await expect(secretDialog.getByRole('button', { name: 'Done' })).toBeDisabled()
  await secretDialog.getByLabel('I have stored this key somewhere safe').check()
  await secretDialog.getByRole('button', { name: 'Done' }).click()
  await expect(secretDialog).toBeHidden()

  // the seed's columns from 1024 px up
  await page.setViewportSize({ width: 1280, height: 900 })
  const headers = await page.getByTestId('api-keys-table').locator('thead th').allInnerTexts()
  expect(headers.map(text => text.trim())).toEqual(['Name', 'Prefix', 'Created by', 'Created', 'Last used', 'Status', 'Actions'])
  const row = page.locator('tbody tr').filter({ hasText: 'Nightly sync' })
  await expect(row.getByTestId('key-prefix')).toHaveText(shownAs)
  await expect(row).toContainText('Kim Keys')
  await expect(row).toContainText('Never')
  await expect(row.getByText('Active', { exact: true }).filter({ visible: true })).toBeVisible()
  await expect(page.getByText(key)).toHaveCount(0)

  const first = await callTasks(key)
  expect(first.status).toBe(200)
  expect(await first.json()).toEqual([])

  await page.reload()
  await expect(row).not.toContainText('Never')

  // Cancel closes the confirmation, revokes nothing and gives focus back to the row's Revoke button
  const revokeButton = row.getByRole('button', { name: 'Revoke Nightly sync' })
  await expect(row.getByRole('button', { name: 'Roll Nightly sync' })).toBeVisible()
  await revokeButton.click()
  const revokeDialog = page.getByRole('dialog', { name: 'Revoke Nightly sync?' })
  await expect(revokeDialog).toContainText(shownAs)
  await revokeDialog.getByRole('button', { name: 'Cancel' }).click()
  await expect(revokeDialog).toBeHidden()
  await expect(revokeButton).toBeFocused()
  await expect(row.getByText('Active', { exact: true }).filter({ visible: true })).toBeVisible()
  expect((await callTasks(key)).status).toBe(200)

  await revokeButton.click()
  await revokeDialog.getByRole('button', { name: 'Revoke key' }).click()
  await expect(revokeDialog).toBeHidden()
  // revoked keys are hidden until asked for
  await expect(row).toHaveCount(0)
  await expect(page.getByTestId('api-keys-hidden')).toContainText('1 revoked or expired key is hidden')
  await page.getByRole('button', { name: 'Show all keys' }).click()
  await expect(row.getByText('Revoked', { exact: true }).filter({ visible: true })).toBeVisible()
  // a revoked key has no action left
  await expect(row.getByRole('button')).toHaveCount(0)
  await page.screenshot({ path: 'test-results/api-keys.png', fullPage: true })

  const refused = await callTasks(key)
  expect(refused.status).toBe(401)
  expect(await refused.json()).toMatchObject({ error: 'This API key has been revoked', code: 'invalid_api_key' })
})

test('a member sees no API Keys tab and is sent back to settings', async ({ page }) => {
  const { teamId, member } = await teamWithMember(app, { owner: 'Olga Owner', team: 'Members Only', member: 'Max Member' })
  await member.put('/api/auth/current-team', { team_id: teamId })

  await signInPage(page, app.url, member.user!.email, '/app/settings/api-keys')
  await expect(page).toHaveURL(`${app.url}/app/settings`)
  await expect(page.getByRole('link', { name: 'Members' })).toBeVisible()
  await expect(page.getByRole('link', { name: 'API Keys' })).toHaveCount(0)
})

test('an owner creates a read-only key and a key for chosen tables, sees their access, and rolls one with an overlap', async ({ page }) => {
  const { owner } = await ownerWithTeam(app, { owner: 'Sky Scopes', team: 'Scope Team' })
  await signInPage(page, app.url, owner.user!.email, '/app/settings/api-keys')
  await expect(page).toHaveURL(`${app.url}/app/settings/api-keys`)

  async function createKey(name: string, choose: () => Promise<void>): Promise<string> {
    await page.getByRole('button', { name: 'Create Key' }).first().click()
    const dialog = page.getByRole('dialog', { name: 'Create API key' })
    await dialog.getByLabel('Name').fill(name)
    await choose()
    await dialog.getByRole('button', { name: 'Create key' }).click()
    const secret = page.getByRole('dialog', { name: 'Your new API key' })
    const key = await secret.getByLabel('API key').inputValue()
    await secret.getByLabel('I have stored this key somewhere safe').check()
    await secret.getByRole('button', { name: 'Done' }).click()
    await expect(secret).toBeHidden()
    return key
  }

  const reader = await createKey('Reporting', async () => {
    await page.getByRole('radio', { name: 'All tables, read-only' }).check()
  })
  await expect(page.locator('tbody tr').filter({ hasText: 'Reporting' })).toContainText('All tables, read-only')
  expect((await callTasks(reader)).status).toBe(200)
  const write = await fetch(`${app.url}/api/v1/tasks`, { method: 'POST', headers: { 'authorization': `Bearer ${reader}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'No' }) })
  expect(write.status).toBe(403)

  const dialog = page.getByRole('dialog', { name: 'Create API key' })
  const tasksKey = await createKey('Task sync', async () => {
    await page.getByRole('radio', { name: 'Chosen tables' }).check()
    // no table chosen: the form says so and sends nothing
    await dialog.getByRole('button', { name: 'Create key' }).click()
    await expect(dialog.getByText('Give the key access to at least one table')).toBeVisible()
    await dialog.getByRole('combobox', { name: 'Tasks' }).click()
    await page.getByRole('option', { name: 'Read and write' }).click()
  })
  const row = page.locator('tbody tr').filter({ hasText: 'Task sync' })
  await expect(row).toContainText('tasks: read and write')
  expect((await callTasks(tasksKey)).status).toBe(200)
  expect((await fetch(`${app.url}/api/v1/projects`, { headers: { authorization: `Bearer ${tasksKey}` } })).status).toBe(403)

  await row.getByRole('button', { name: 'Roll Task sync' }).click()
  const rollDialog = page.getByRole('dialog', { name: 'Roll Task sync?' })
  await rollDialog.getByRole('combobox', { name: 'Old key' }).click()
  await page.getByRole('option', { name: 'Keep the old key for 1 hour' }).click()
  await rollDialog.getByRole('button', { name: 'Roll key' }).click()
  const secret = page.getByRole('dialog', { name: 'Your new API key' })
  const rolled = await secret.getByLabel('API key').inputValue()
  expect(rolled).not.toBe(tasksKey)
  await secret.getByLabel('I have stored this key somewhere safe').check()
  await secret.getByRole('button', { name: 'Done' }).click()
  // both keys work during the overlap, with the same access
  expect((await callTasks(rolled)).status).toBe(200)
  expect((await callTasks(tasksKey)).status).toBe(200)
  expect((await fetch(`${app.url}/api/v1/projects`, { headers: { authorization: `Bearer ${rolled}` } })).status).toBe(403)
  const rows = page.locator('tbody tr').filter({ hasText: 'Task sync' })
  await expect(rows).toHaveCount(2)
  // the two keys of one name say which replaced which
  await expect(rows.filter({ hasText: `Rolled to sk_...${rolled.slice(0, 8)}` })).toContainText(`sk_...${tasksKey.slice(0, 8)}`)
  await expect(rows.filter({ hasText: `Rolled from sk_...${tasksKey.slice(0, 8)}` })).toContainText(`sk_...${rolled.slice(0, 8)}`)
})

test('the roll dialog starts at the API\'s default overlap: the old key stops at once', async ({ page }) => {
  const { owner, teamId } = await ownerWithTeam(app, { owner: 'Rhea Roll', team: 'Roll Team' })
  const created = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Default roll' })).body
  await signInPage(page, app.url, owner.user!.email, '/app/settings/api-keys')
  await page.locator('tbody tr').filter({ hasText: 'Default roll' }).getByRole('button', { name: 'Roll Default roll' }).click()
  const rollDialog = page.getByRole('dialog', { name: 'Roll Default roll?' })
  await expect(rollDialog.getByRole('combobox', { name: 'Old key' })).toContainText('Stop the old key now (default)')
  await expect(rollDialog).toContainText('as through the API')
  await rollDialog.getByRole('button', { name: 'Roll key' }).click()
  const secret = page.getByRole('dialog', { name: 'Your new API key' })
  await secret.getByLabel('I have stored this key somewhere safe').check()
  await secret.getByRole('button', { name: 'Done' }).click()
  await expect.poll(async () => (await callTasks(created.key)).status).toBe(401)
  // the old key is expired now, so the default filter shows only its replacement
  await expect(page.locator('tbody tr').filter({ hasText: 'Default roll' })).toHaveCount(1)
  await expect(page.getByTestId('api-keys-hidden')).toContainText('1 revoked or expired key is hidden')
})

test('an admin edits a key\'s name, access and expiry; the next request holds to them and the activity log has it', async ({ page }) => {
  const { owner, teamId } = await ownerWithTeam(app, { owner: 'Eddie Edit', team: 'Edit Team' })
  const created = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Everything' })).body
  expect((await fetch(`${app.url}/api/v1/projects`, { headers: { authorization: `Bearer ${created.key}` } })).status).toBe(200)
  await signInPage(page, app.url, owner.user!.email, '/app/settings/api-keys')
  const row = page.locator('tbody tr').filter({ hasText: 'Everything' })
  await row.getByRole('button', { name: 'Edit Everything' }).click()
  const dialog = page.getByRole('dialog', { name: 'Edit Everything' })
  await expect(dialog).toContainText(`sk_...${created.key_prefix}`)
  await expect(dialog.getByRole('radio', { name: 'All tables, read and write' })).toBeChecked()
  await dialog.getByLabel('Name').fill('')
  await dialog.getByRole('button', { name: 'Save changes' }).click()
  // the message names its field
  await expect(dialog.getByText('Name is required')).toBeVisible()
  await dialog.getByLabel('Name').fill('Tasks only')
  await dialog.getByLabel('Name').blur()
  await expect(dialog.getByText('Name is required')).toBeHidden()
  await dialog.getByRole('radio', { name: 'Chosen tables' }).check()
  await dialog.getByRole('combobox', { name: 'Tasks' }).click()
  await page.getByRole('option', { name: 'Read', exact: true }).click()
  await dialog.getByRole('button', { name: 'Save changes' }).click()
  await expect(dialog).toBeHidden()
  const renamed = page.locator('tbody tr').filter({ hasText: 'Tasks only' })
  await expect(renamed).toContainText('tasks: read')
  await expect(renamed.getByTestId('key-prefix')).toHaveText(`sk_...${created.key_prefix}`)
  expect((await fetch(`${app.url}/api/v1/projects`, { headers: { authorization: `Bearer ${created.key}` } })).status).toBe(403)
  expect((await callTasks(created.key)).status).toBe(200)
  const { rows } = await app.db.query(`select count(*)::int as n from public.activity_log where table_name = 'api_keys' and record_id = $1 and action = 'update'`, [created.id])
  expect(rows[0].n).toBe(1)
  await page.screenshot({ path: 'test-results/api-keys-edited.png', fullPage: true })
})

test('revoking a key says how many webhook endpoints it stops, disables them with the reason, and an admin enables one again', async ({ page }) => {
  const { owner, teamId } = await ownerWithTeam(app, { owner: 'Hana Hooks', team: 'Hook Keys' })
  const created = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'Zapier', scopes: { '*': 'write', 'webhooks': 'write' } })).body
  for (const path of ['one', 'two']) {
    const subscribed = await fetch(`${app.url}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { 'authorization': `Bearer ${created.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `https://hooks.example.com/${path}`, events: ['tasks.created'] }),
    })
    expect(subscribed.status).toBe(201)
  }
  await signInPage(page, app.url, owner.user!.email, '/app/settings/api-keys')
  const row = page.locator('tbody tr').filter({ hasText: 'Zapier' })
  await row.getByRole('button', { name: 'Revoke Zapier' }).click()
  const dialog = page.getByRole('dialog', { name: 'Revoke Zapier?' })
  await expect(dialog).toContainText(`sk_...${created.key_prefix}`)
  await expect(dialog).toContainText('It also stops the 2 webhook endpoints it created')
  await dialog.getByRole('button', { name: 'Revoke key' }).click()
  // the toast's title (its text is also read out by a live region)
  await expect(page.locator('[data-slot="title"]', { hasText: '2 webhook endpoints disabled' })).toBeVisible()

  await page.goto(`${app.url}/app/settings/webhooks`)
  const reasons = page.getByText('Disabled because the API key "Zapier" that created it was revoked')
  await expect(reasons).toHaveCount(2)
  await page.getByRole('button', { name: 'Enable' }).first().click()
  await expect(reasons).toHaveCount(1)
  const { rows } = await app.db.query('select enabled from public.webhook_endpoints where team_id = $1 order by enabled desc', [teamId])
  expect(rows.map(r => r.enabled)).toEqual([true, false])
})

test('two keys with long names fit the page at 390, 820 and 1440 px: each row shows its key\'s first characters and its Roll and Revoke buttons on screen', async ({ page }) => {
  const { owner, teamId } = await ownerWithTeam(app, { owner: 'Wanda Widths', team: 'Wide Team' })
  const names = ['Nightly warehouse sync for the EU production reporting cluster', 'Zapier: onboarding automations for the customer support team']
  const prefixes: string[] = []
  for (const name of names) {
    const created = await owner.post(`/api/teams/${teamId}/api-keys`, { name, expires_at: null })
    expect(created.status).toBe(201)
    prefixes.push(created.body.key_prefix)
  }

  await signInPage(page, app.url, owner.user!.email, '/app/settings/api-keys')
  await expect(page).toHaveURL(`${app.url}/app/settings/api-keys`)
  const table = page.getByTestId('api-keys-table')
  for (const width of [390, 820, 1440]) {
    await page.setViewportSize({ width, height: width < 800 ? 844 : 900 })
    await expect(table.locator('tbody tr')).toHaveCount(2)
    // nothing scrolls sideways: neither the page nor the table's own container
    const overflow = await page.evaluate(() => {
      const root = document.scrollingElement!
      const container = document.querySelector<HTMLElement>('[data-testid="api-keys-table"]')!
      return { page: root.scrollWidth - root.clientWidth, table: container.scrollWidth - container.clientWidth }
    })
    expect(overflow, `at ${width} px`).toEqual({ page: 0, table: 0 })
    for (const [index, name] of names.entries()) {
      const row = table.locator('tbody tr').filter({ hasText: name })
      await expect(row.getByText(`sk_...${prefixes[index]}`).filter({ visible: true })).toBeVisible()
      for (const action of ['Roll', 'Revoke']) {
        const box = (await row.getByRole('button', { name: `${action} ${name}` }).boundingBox())!
        expect(box.x, `${action} at ${width} px`).toBeGreaterThanOrEqual(0)
        expect(box.x + box.width, `${action} at ${width} px`).toBeLessThanOrEqual(width)
      }
    }
    await page.screenshot({ path: `test-results/api-keys-${width}.png`, fullPage: true })
  }
})
