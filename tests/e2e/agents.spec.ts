import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { expect, test } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { e2ePassword, signInPage } from '../support/browser'
import { createTeam, signUp, uniqueEmail } from '../support/http'

let app: TestApp

test.beforeAll(async () => {
  app = await startApp()
})

test.afterAll(async () => {
  await app?.stop()
})

test('an owner gives a key the webhooks scope; what the key subscribes and what its agent writes are shown with its name', async ({ page }) => {
  const email = uniqueEmail('agents')
  const owner = await signUp(app, { email, password: e2ePassword, name: 'Ava Agents' })
  await createTeam(owner, 'Agent Team')
  await signInPage(page, app.url, email, '/app/settings/api-keys')
  await expect(page).toHaveURL(`${app.url}/app/settings/api-keys`)

  await page.getByRole('button', { name: 'Create Key' }).first().click()
  const dialog = page.getByRole('dialog', { name: 'Create API key' })
  await dialog.getByLabel('Name').fill('Zap')
  await dialog.getByRole('combobox', { name: 'Webhook endpoints' }).click()
  await page.getByRole('option', { name: 'Read and write' }).click()
  await dialog.getByRole('button', { name: 'Create key' }).click()
  const secret = page.getByRole('dialog', { name: 'Your new API key' })
  const key = await secret.getByLabel('API key').inputValue()
  await secret.getByLabel('I have stored this key somewhere safe').check()
  await secret.getByRole('button', { name: 'Done' }).click()
  await expect(page.locator('tbody tr').filter({ hasText: 'Zap' })).toContainText('All tables, webhook endpoints: read and write')

  const subscribed = await fetch(`${app.url}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { 'authorization': `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://hooks.example.com/catch/1', events: ['tasks.created'] }),
  })
  expect(subscribed.status).toBe(201)
  await page.goto(`${app.url}/app/settings/webhooks`)
  const endpoint = page.locator('[data-endpoint-url="https://hooks.example.com/catch/1"]')
  await expect(endpoint.getByTestId('endpoint-key')).toHaveText(/Subscribed by the API key Zap/)

  const agent = new McpClient({ name: 'e2e-agent', version: '1.0.0' })
  await agent.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  const created = await agent.callTool({ name: 'create_tasks', arguments: { title: 'Written by an agent' } })
  expect(created.isError).toBeFalsy()
  await agent.close()

  await page.goto(`${app.url}/app/activity`)
  const row = page.getByTestId('activity-table').locator('tbody tr').filter({ hasText: 'Written by an agent' })
  await expect(row.getByText('mcp', { exact: true })).toBeVisible()
  await expect(row.getByTestId('activity-key')).toHaveText(/Zap/)
  await page.screenshot({ path: 'test-results/agents-activity.png' })
})
