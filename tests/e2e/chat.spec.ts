import { expect, test } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { e2ePassword, signInPage } from '../support/browser'
import { createTeam, signUp, uniqueEmail } from '../support/http'
import { lastToolResult, startScriptedModel, type ScriptedModelServer } from '../support/openai-server'

const password = e2ePassword
let app: TestApp
let model: ScriptedModelServer

test.beforeAll(async () => {
  model = await startScriptedModel()
  app = await startApp({ LLM_PROVIDER_API_KEY: 'test-key', LLM_PROVIDER_BASE_URL: model.url, LLM_MODEL: 'scripted-model' })
})

test.afterAll(async () => {
  await app?.stop()
  await model?.close()
})

test('a member asks a question, sees the SQL and the streamed answer, approves a write and finds it in Activity', async ({ page }) => {
  const email = uniqueEmail('chat')
  const owner = await signUp(app, { email, name: 'Grace Hopper', password })
  const teamId = await createTeam(owner, 'Compilers')
  await app.db.query(`insert into public.tasks (team_id, created_by, title) values ($1, $2, 'Draft the budget')`, [teamId, owner.user!.id])

  await signInPage(page, app.url, email, '/app/chat')
  await expect(page).toHaveURL(`${app.url}/app/chat`)
  await expect(page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Chat' })).toBeVisible()

  // a question: the model reads with SQL, then answers in Markdown, word by word
  model.enqueue(
    { toolCalls: [{ name: 'query_database', input: { sql: 'select title, status from tasks order by title' } }] },
    request => ({ text: `You have ${lastToolResult(request).row_count} task: **${lastToolResult(request).rows[0][0]}**.`, chunkDelayMs: 40 }),
  )
  await page.getByPlaceholder('Which tasks are due this week?').fill('Which tasks do we have?')
  await page.keyboard.press('Enter')
  await expect(page).toHaveURL(new RegExp(`${app.url}/app/chat/[0-9a-f-]{36}$`))
  const chatId = page.url().split('/').pop()!
  await expect(page.getByTestId('tool-sql')).toHaveText('select title, status from tasks order by title')
  await expect(page.getByTestId('tool-result')).toContainText('Draft the budget')
  await expect(page.locator('.chat-markdown strong', { hasText: 'Draft the budget' })).toBeVisible()
  await expect(page.getByText('You have 1 task:')).toBeVisible()
  // the user's own text is shown as typed, and the chat is named after it
  await expect(page.getByRole('link', { name: 'Which tasks do we have?' })).toBeVisible()

  // a write: proposed, approved in the page, then made
  model.enqueue(
    { toolCalls: [{ name: 'create_tasks', input: { title: 'Book the venue', priority: 2 } }] },
    { text: 'Created the task **Book the venue**.' },
  )
  await page.getByPlaceholder('Ask about your team').fill('Add a task to book the venue')
  await page.keyboard.press('Enter')
  const proposal = page.locator('[data-tool="create_tasks"]')
  await expect(proposal.getByTestId('tool-input')).toContainText('"title": "Book the venue"')
  await expect(proposal.getByText('Needs your approval')).toBeVisible()
  await proposal.getByRole('button', { name: 'Approve' }).click()
  await expect(page.getByText('Created the task')).toBeVisible()
  await expect(proposal.getByTestId('tool-result')).toContainText('Book the venue')
  await page.screenshot({ path: 'test-results/chat-conversation.png', fullPage: true })

  // the write is in the activity log, attributed to the chat
  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Activity' }).click()
  await expect(page).toHaveURL(`${app.url}/app/activity`)
  const entry = page.getByTestId('activity-table').locator('tbody tr').filter({ hasText: 'tasks' }).filter({ hasText: 'insert' }).filter({ hasText: 'chat' })
  await expect(entry).toHaveCount(1)
  await expect(entry.getByRole('link', { name: 'Open the chat that made this change' })).toHaveAttribute('href', `/app/chat/${chatId}`)
})

test('the chat is hidden when no provider key is set', async ({ page }) => {
  const plain = await startApp()
  try {
    const email = uniqueEmail('nochat')
    const user = await signUp(plain, { email, password })
    await createTeam(user, 'Quiet team')
    await page.goto(`${plain.url}/login`)
    await page.waitForLoadState('networkidle')
    await page.waitForFunction(() => Boolean((document.querySelector('#__nuxt') as { __vue_app__?: unknown } | null)?.__vue_app__))
    await page.getByLabel('E-mail').fill(email)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect(page).toHaveURL(`${plain.url}/app`)
    const navigation = page.getByRole('navigation', { name: 'Workspace' })
    await expect(navigation.getByRole('link', { name: 'Settings' })).toBeVisible()
    await expect(navigation.getByRole('link', { name: 'Chat' })).toHaveCount(0)
    await page.goto(`${plain.url}/app/chat`)
    await expect(page).toHaveURL(`${plain.url}/app`)
  }
  finally {
    await plain.stop()
  }
})
