import { expect, test } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { e2ePassword, signInPage } from '../support/browser'
import { addMember, createTeam, signUp, uniqueEmail } from '../support/http'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'

const password = e2ePassword
let app: TestApp
let receiver: WebhookReceiver

test.beforeAll(async () => {
  app = await startApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '200' })
  receiver = await startWebhookReceiver()
})

test.afterAll(async () => {
  await receiver?.close()
  await app?.stop()
})

test('an admin invites an e-mail, the invitee signs up through the copied link and joins', async ({ browser }) => {
  const owner = await signUp(app, { name: 'Olga Owner', password })
  const teamId = await createTeam(owner, 'Invite Crew')
  const admin = await signUp(app, { name: 'Ada Admin', password })
  await addMember(app, teamId, admin, 'admin')
  await owner.patch(`/api/teams/${teamId}`, { webhook_url: receiver.url })
  receiver.secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
  const inviteeEmail = uniqueEmail('newbie')

  const adminContext = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] })
  const adminPage = await adminContext.newPage()
  await signInPage(adminPage, app.url, admin.user!.email, '/app/settings/members')
  await expect(adminPage).toHaveURL(`${app.url}/app/settings/members`)

  await adminPage.getByRole('button', { name: 'Invite member' }).click()
  const dialog = adminPage.getByRole('dialog', { name: 'Invite member' })
  await dialog.getByLabel('E-mail').fill(inviteeEmail)
  await dialog.getByRole('button', { name: 'Send invitation' }).click()
  const linkDialog = adminPage.getByRole('dialog', { name: 'Invitation created' })
  await expect(linkDialog.getByLabel('Invite link')).toHaveValue(new RegExp(`^${app.url}/invite/`))
  await linkDialog.getByRole('button', { name: 'Done' }).click()
  await expect(linkDialog).toBeHidden()
  await expect(dialog).toBeHidden()

  const pending = adminPage.getByTestId('pending-invitations')
  const row = pending.locator('tbody tr').filter({ hasText: inviteeEmail })
  await expect(row).toContainText(/member/i)
  await expect(row).toContainText('Ada Admin')
  await row.getByRole('button', { name: `Actions for ${inviteeEmail}` }).click()
  await adminPage.getByRole('menuitem', { name: 'Copy link' }).click()
  await expect(adminPage.getByText('Invite link copied').first()).toBeVisible()
  const inviteUrl = await adminPage.evaluate(() => navigator.clipboard.readText())
  expect(inviteUrl).toMatch(new RegExp(`^${app.url}/invite/[\\w-]{43}$`))

  // the webhook receiver got the same link, signed
  await receiver.waitFor(1)
  expect(receiver.received[0]!.verifyError).toBeNull()
  expect(receiver.received[0]!.payload!.data.invite_url).toBe(inviteUrl)

  const inviteeContext = await browser.newContext()
  const inviteePage = await inviteeContext.newPage()
  await inviteePage.goto(inviteUrl)
  await expect(inviteePage.getByText('Join Invite Crew').first()).toBeVisible()
  await inviteePage.getByRole('link', { name: 'Create an account' }).click()
  await expect(inviteePage).toHaveURL(/\/signup\?redirect=/)
  await inviteePage.getByLabel('Name').fill('Nina Newbie')
  await inviteePage.getByLabel('E-mail').fill(inviteeEmail)
  await inviteePage.getByLabel('Password').fill(password)
  await inviteePage.getByRole('button', { name: 'Create account' }).click()
  await expect(inviteePage).toHaveURL(inviteUrl)
  await inviteePage.getByRole('button', { name: 'Join Invite Crew' }).click()
  await expect(inviteePage).toHaveURL(`${app.url}/app`)
  await expect(inviteePage.getByTestId('team-switcher')).toContainText('Invite Crew')

  await adminPage.reload()
  const members = adminPage.getByRole('table').first()
  await expect(members).toContainText('Nina Newbie')
  await expect(adminPage.getByText('No pending invitations.')).toBeVisible()

  await adminPage.goto(`${app.url}/app/activity`)
  const entries = adminPage.getByTestId('activity-table').locator('tbody tr')
  await expect(entries.filter({ hasText: 'invitations' }).filter({ hasText: 'insert' })).toContainText('Ada Admin')
  await expect(entries.filter({ hasText: 'invitations' }).filter({ hasText: 'update' })).toContainText('Nina Newbie')
  await expect(entries.filter({ hasText: 'team_members' }).filter({ hasText: 'insert' }).filter({ hasText: 'Nina Newbie' })).toHaveCount(1)
  await adminPage.screenshot({ path: 'test-results/invitations-activity.png', fullPage: true })

  await adminContext.close()
  await inviteeContext.close()
})

test('an admin sees the signing secret, sends a test event and sees the delivery', async ({ page }) => {
  const owner = await signUp(app, { name: 'Wendy Webhook', password })
  const teamId = await createTeam(owner, 'Hook Crew')
  await owner.patch(`/api/teams/${teamId}`, { webhook_url: receiver.url })
  const secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
  receiver.secret = secret
  const before = receiver.received.length

  await signInPage(page, app.url, owner.user!.email, '/app/settings/webhooks')
  await expect(page).toHaveURL(`${app.url}/app/settings/webhooks`)
  const secretField = page.getByRole('textbox', { name: 'Signing secret' })
  await expect(secretField).not.toHaveValue(secret)
  await page.getByRole('button', { name: 'Reveal secret' }).click()
  await expect(secretField).toHaveValue(secret)

  await page.getByRole('button', { name: 'Send test event' }).click()
  await expect(page.getByText('Test event queued').first()).toBeVisible()
  await receiver.waitFor(before + 1)
  expect(receiver.received.at(-1)!.payload!.type).toBe('webhook.test')
  const deliveries = page.getByTestId('webhook-deliveries')
  await page.getByRole('button', { name: 'Refresh' }).click()
  await expect(deliveries.locator('tbody tr').first()).toContainText('webhook.test')
  await expect(deliveries.locator('tbody tr').first()).toContainText('succeeded')
  await expect(deliveries.locator('tbody tr').first()).toContainText('200')

  await page.getByRole('button', { name: 'Rotate secret' }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click()
  await expect(page.getByText('Signing secret rotated').first()).toBeVisible()
  await expect(secretField).not.toHaveValue(secret)
  await expect(secretField).toHaveValue(/^whsec_/)
  await page.screenshot({ path: 'test-results/webhooks-settings.png', fullPage: true })
})
