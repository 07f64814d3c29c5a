import { expect, test, type Page } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { e2ePassword, signInPage } from '../support/browser'
import { createTeam, signUp, uniqueEmail } from '../support/http'
import { lastToolResult, startScriptedModel, type ScriptedModelServer } from '../support/openai-server'
import { axeOn, seriousViolations } from '../support/axe'

const password = e2ePassword
let app: TestApp
let model: ScriptedModelServer

// each test signs up its own user and team: the two workers share them out (each with its own app and model)
test.describe.configure({ mode: 'parallel' })

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

/**
 * Critical and serious axe-core violations of the chat's parts of the page, as "rule: targets"
 * lines. The app shell around them (the workspace sidebar, the document's language) is the
 * accessibility test of the shell's.
 */
async function chatViolations(page: Page): Promise<string[]> {
  // colours are judged once transitions (fades, slide-overs) have ended
  await page.waitForFunction(() => document.getAnimations().every(animation => animation.playState !== 'running'))
  return (await seriousViolations(axeOn(page).exclude('[id$="app-sidebar"]').disableRules(['html-has-lang'])))
    .map(violation => `${violation.id}: ${violation.nodes.map(node => `${node.target.join(' ')} ${node.html} ${node.failureSummary ?? ''}`).join(', ')}`)
}

for (const width of [390, 820, 1440]) {
  test(`at ${width} px: ask, see the chart, approve and deny writes, stop, regenerate, with every button named`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 })
    const email = uniqueEmail(`chat${width}`)
    const owner = await signUp(app, { email, name: 'Ada Lovelace', password })
    const teamId = await createTeam(owner, `Engines ${width}`)
    const { rows: [project] } = await app.db.query(`insert into public.projects (team_id, created_by, name) values ($1, $2, 'Website relaunch') returning id`, [teamId, owner.user!.id])
    const { rows: [doomed] } = await app.db.query(
      `insert into public.tasks (team_id, created_by, title, status, project_id) values ($1, $2, 'Draft the budget', 'todo', $3) returning id`, [teamId, owner.user!.id, project.id])
    await app.db.query(`insert into public.tasks (team_id, created_by, title, status, completed_at) values ($1, $2, 'Print flyers', 'done', now()), ($1, $2, 'Call the printer', 'in_progress', null), ($1, $2, 'Order paper', 'todo', null)`, [teamId, owner.user!.id])

    await signInPage(page, app.url, email, '/app/chat')
    await expect(page).toHaveURL(`${app.url}/app/chat`)
    expect(await chatViolations(page)).toEqual([])

    // a suggested question starts the chat; the answer counts tasks per status: a chart and its table
    model.enqueue(
      { toolCalls: [{ name: 'query_database', input: { sql: 'select status, count(*)::int as tasks from tasks group by status order by status' } }] },
      { text: 'Most tasks are **todo**.' },
    )
    await page.getByRole('button', { name: 'How many open tasks does each project have?' }).click()
    await expect(page).toHaveURL(new RegExp(`${app.url}/app/chat/[0-9a-f-]{36}$`))
    const chart = page.getByTestId('tool-chart')
    await expect(chart).toBeVisible()
    await expect(chart.getByRole('img')).toHaveAttribute('aria-label', 'Bar chart of tasks by status: done 1, in_progress 1, todo 2')
    // drawn by unovis: an svg with the three bars (paths) besides the axes
    const drawing = chart.locator('svg').first()
    await expect(drawing).toBeVisible()
    expect((await drawing.boundingBox())!.height).toBeGreaterThan(150)
    expect(await chart.locator('svg path').count()).toBeGreaterThanOrEqual(3)
    await expect(page.getByTestId('tool-result')).toContainText('3 rows')
    await expect(page.getByText('Most tasks are')).toBeVisible()

    // the conversation has the width of the screen (less the app sidebar from the large breakpoint)
    const prompt = await page.locator('form').filter({ has: page.getByRole('textbox', { name: 'Your question' }) }).boundingBox()
    expect(prompt!.width).toBeGreaterThan(width >= 1024 ? 500 : width - 60)
    // the chat list: a panel on a large screen, a slide-over below
    const chatLink = page.getByRole('link', { name: 'How many open tasks does each project have?' })
    if (width >= 1024) {
      await expect(chatLink).toBeVisible()
    }
    else {
      await expect(chatLink).toBeHidden()
      await page.getByRole('button', { name: 'Chats' }).click()
      const list = page.getByRole('dialog', { name: 'Chats' })
      await expect(list.getByRole('link', { name: 'How many open tasks does each project have?' })).toBeVisible()
      expect(await chatViolations(page)).toEqual([])
      await page.keyboard.press('Escape')
      await expect(list).toBeHidden()
    }

    // a write proposed as a sentence, its input behind Details, approved, and linked to the record
    model.enqueue(
      { toolCalls: [{ name: 'create_tasks', input: { title: 'Write the launch post', project_id: project.id } }] },
      { text: 'Created the task.' },
    )
    await page.getByRole('textbox', { name: 'Your question' }).fill('Add a task to write the launch post')
    await page.keyboard.press('Enter')
    const create = page.locator('[data-tool="create_tasks"]')
    await expect(create.getByTestId('tool-title')).toHaveText('Create task \'Write the launch post\' in project Website relaunch?')
    await expect(create.getByTestId('tool-input')).toBeHidden()
    await create.getByText('Details').click()
    await expect(create.getByTestId('tool-input')).toContainText(`"project_id": "${project.id}"`)
    expect(await chatViolations(page)).toEqual([])
    await create.getByRole('button', { name: 'Approve' }).click()
    await expect(page.getByText('Created the task.')).toBeVisible()
    const { rows: [created] } = await app.db.query(`select id from public.tasks where team_id = $1 and title = 'Write the launch post'`, [teamId])
    await expect(create.getByRole('link', { name: 'Created task \'Write the launch post\'' })).toHaveAttribute('href', `/app/data/tasks/${created.id}`)

    // a delete, denied: nothing is deleted
    model.enqueue(
      { toolCalls: [{ name: 'delete_tasks', input: { id: doomed.id } }] },
      { text: 'Kept the task.' },
    )
    await page.getByRole('textbox', { name: 'Your question' }).fill('Delete the budget task')
    await page.keyboard.press('Enter')
    const remove = page.locator('[data-tool="delete_tasks"]')
    await expect(remove.getByTestId('tool-title')).toHaveText('Delete task \'Draft the budget\'?')
    await remove.getByRole('button', { name: 'Deny' }).click()
    await expect(page.getByText('Kept the task.')).toBeVisible()
    await expect(remove.getByText('Denied')).toBeVisible()
    expect((await app.db.query('select count(*)::int as n from public.tasks where id = $1', [doomed.id])).rows[0].n).toBe(1)

    // stop: while the answer streams the submit button is named Stop
    model.enqueue({ text: `one two three ${'and more '.repeat(40)}fourteen`, chunkDelayMs: 250 })
    await page.getByRole('textbox', { name: 'Your question' }).fill('Count slowly')
    await page.keyboard.press('Enter')
    await expect(page.getByText('one two three')).toBeVisible()
    await page.getByRole('button', { name: 'Stop' }).click()
    await expect(page.getByRole('button', { name: 'Send' })).toBeVisible()
    await expect(page.getByText('fourteen')).toHaveCount(0)

    // regenerate: offered on the last answer only
    const regenerate = page.getByRole('button', { name: 'Regenerate answer' })
    await expect(regenerate).toHaveCount(1)
    model.enqueue({ text: 'A fresh answer.' })
    await regenerate.click()
    await expect(page.getByText('A fresh answer.')).toBeVisible()
    await expect(page.getByText('one two three')).toHaveCount(0)
    await expect(page.getByRole('button', { name: 'Copy message' }).first()).toBeVisible()

    // what the answers cost, per message and for the chat
    await expect(page.getByTestId('message-usage').first()).toContainText('tokens')
    await expect(page.getByTestId('chat-usage')).toContainText('tokens')
    expect(await chatViolations(page)).toEqual([])
    await page.emulateMedia({ colorScheme: 'dark' })
    expect(await chatViolations(page)).toEqual([])
    await page.screenshot({ path: `test-results/chat-${width}.png`, fullPage: true })

    // the write's summary leads to the record's page
    await page.getByRole('link', { name: 'Created task \'Write the launch post\'' }).click()
    await expect(page).toHaveURL(`${app.url}/app/data/tasks/${created.id}`)
    await expect(page.getByText('Write the launch post').first()).toBeVisible()
  })
}

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
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
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
