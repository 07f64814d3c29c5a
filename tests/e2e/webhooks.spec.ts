import { expect, test, type Page } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { e2ePassword, signInPage } from '../support/browser'
import { addMember, createTeam, signUp, uniqueEmail } from '../support/http'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver'
import { axeOn, seriousViolations } from '../support/axe'

let app: TestApp
let invitationReceiver: WebhookReceiver
let endpointReceiver: WebhookReceiver

test.beforeAll(async () => {
  app = await startApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_POLL_INTERVAL_MS: '200' })
  invitationReceiver = await startWebhookReceiver()
  endpointReceiver = await startWebhookReceiver(() => ({ status: 200, body: 'thanks from the receiver' }))
})

test.afterAll(async () => {
  await invitationReceiver?.close()
  await endpointReceiver?.close()
  await app?.stop()
})

async function expectNoSeriousViolations(page: Page, label: string) {
  const serious = await seriousViolations(axeOn(page))
  expect(serious.map(violation => `${violation.id}: ${violation.nodes.map(node => node.target.join(' ')).join(', ')}`), label).toEqual([])
}

test('an owner adds an endpoint for task events, sees a delivery with its attempt, tests, disables, enables, recovers and deletes it', async ({ page }) => {
  const email = uniqueEmail('hooks')
  const owner = await signUp(app, { email, password: e2ePassword, name: 'Hana Hooks' })
  const teamId = await createTeam(owner, 'Hook Team')
  await owner.patch(`/api/teams/${teamId}`, { webhook_url: invitationReceiver.url })
  const secret = (await owner.get(`/api/teams/${teamId}/webhooks/secret`)).body.secret
  endpointReceiver.secret = secret
  const key = (await owner.post(`/api/teams/${teamId}/api-keys`, { name: 'writer' })).body.key

  await signInPage(page, app.url, email, '/app/settings/webhooks')
  await expect(page).toHaveURL(`${app.url}/app/settings/webhooks`)
  await expect(page.getByText('No endpoints yet')).toBeVisible()
  // the team's webhook URL is shown as the invitation receiver
  await expect(page.getByText(invitationReceiver.url)).toBeVisible()

  await page.getByRole('button', { name: 'Add endpoint' }).first().click()
  const form = page.getByRole('dialog', { name: 'Add endpoint' })
  // nothing chosen yet: the form says what is missing and sends nothing
  await form.getByLabel('Endpoint URL').fill(endpointReceiver.url)
  await form.getByRole('button', { name: 'Add endpoint' }).click()
  await expect(form.getByText(/at least one event type/)).toBeVisible()
  await form.getByText('Choose events').click()
  const option = page.getByRole('option', { name: 'tasks.created' })
  await option.click()
  await expect(option).toHaveAttribute('aria-selected', 'true')
  // Escape closes the event list, not the dialog
  await page.keyboard.press('Escape')
  await expect(page.getByRole('listbox')).toBeHidden()
  await expect(form).toBeVisible()
  await form.getByLabel('Description').fill('Task sync')
  await form.getByRole('button', { name: 'Add endpoint' }).click()
  await expect(form).toBeHidden()

  const card = page.locator(`[data-endpoint-url="${endpointReceiver.url}"]`)
  await expect(card).toContainText('Enabled')
  await expect(card).toContainText('tasks.created')
  await expect(card).toContainText('Task sync')

  // a write through the API reaches the endpoint, and the page shows the attempt with the answer
  const created = await fetch(`${app.url}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'authorization': `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Ship the webhooks page' }),
  })
  expect(created.status).toBe(201)
  const [delivery] = await endpointReceiver.waitFor(1)
  expect(delivery!.payload).toMatchObject({ type: 'tasks.created', data: { title: 'Ship the webhooks page' } })
  await card.getByRole('button', { name: 'Deliveries' }).click()
  const deliveries = card.getByTestId('webhook-deliveries')
  await expect(async () => {
    await card.getByRole('button', { name: 'Refresh' }).click()
    await expect(deliveries.locator('tbody tr').first()).toContainText('succeeded', { timeout: 1000 })
  }).toPass()
  await expect(deliveries.locator('tbody tr').first()).toContainText('tasks.created')
  await deliveries.getByRole('button', { name: 'Show attempts' }).first().click()
  await expect(deliveries.getByText('Attempt 1')).toBeVisible()
  await expect(deliveries.getByLabel('Answer to attempt 1')).toHaveText('thanks from the receiver')
  await page.screenshot({ path: 'test-results/webhooks-endpoint.png', fullPage: true })

  await card.getByRole('button', { name: 'Send test' }).click()
  await expect(page.getByText('Test event queued').first()).toBeVisible()
  await endpointReceiver.waitFor(2)
  expect(endpointReceiver.received[1]!.payload!.type).toBe('webhook.test')

  // disabling asks first, then shows who did it
  await card.getByRole('button', { name: 'Disable' }).click()
  const confirm = page.getByRole('dialog', { name: 'Disable this endpoint?' })
  await confirm.getByRole('button', { name: 'Disable endpoint' }).click()
  await expect(card).toContainText('Disabled by Hana Hooks')
  await expect(card.getByRole('button', { name: 'Send test' })).toBeDisabled()
  await card.getByRole('button', { name: 'Enable' }).click()
  await expect(card.getByText('Enabled', { exact: true })).toBeVisible()

  await card.getByRole('button', { name: 'Recover' }).click()
  const recover = page.getByRole('dialog', { name: 'Recover failed deliveries' })
  await expect(recover.getByLabel('Recover since')).not.toHaveValue('')
  await recover.getByRole('button', { name: 'Recover' }).click()
  await expect(page.getByText('No failed deliveries since then').first()).toBeVisible()

  // phone width and dark mode: readable, and no serious accessibility problem
  await expectNoSeriousViolations(page, 'light, 1440 px')
  await page.emulateMedia({ colorScheme: 'dark' })
  for (const width of [390, 820]) {
    await page.setViewportSize({ width, height: 900 })
    await expect(card.getByRole('button', { name: 'Recover' })).toBeVisible()
    await page.screenshot({ path: `test-results/webhooks-${width}-dark.png`, fullPage: true })
    await expectNoSeriousViolations(page, `dark, ${width} px`)
  }
  await page.emulateMedia({ colorScheme: 'light' })
  await page.setViewportSize({ width: 1440, height: 900 })

  await card.getByRole('button', { name: 'Delete' }).click()
  await page.getByRole('dialog', { name: 'Delete this endpoint?' }).getByRole('button', { name: 'Delete endpoint' }).click()
  await expect(page.getByText('No endpoints yet')).toBeVisible()
  expect((await owner.get(`/api/teams/${teamId}/webhooks/endpoints`)).body).toEqual([])
})

test('a member does not see the Webhooks page', async ({ page }) => {
  const owner = await signUp(app, { name: 'Owner' })
  const teamId = await createTeam(owner, 'Members Only')
  const email = uniqueEmail('member')
  const member = await signUp(app, { email, password: e2ePassword, name: 'Mo Member' })
  await addMember(app, teamId, member, 'member')
  await signInPage(page, app.url, email, '/app/settings/webhooks')
  await expect(page).toHaveURL(`${app.url}/app/settings`)
  await expect(page.getByRole('link', { name: 'Webhooks' })).toHaveCount(0)
})
