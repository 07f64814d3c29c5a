import { expect, test, type Browser, type Page } from '@playwright/test'
import { startApp, type TestApp } from '../support/app'
import { openPage, useColorScheme } from '../support/browser'
import { enrolTotp } from '../support/factors'
import { addMember, createTeam, signUp, uniqueEmail, type Client } from '../support/http'
import { startScriptedModel, type ScriptedModelServer } from '../support/openai-server'
import { axeOn, controlsOutside, seriousViolations } from '../support/axe'

// Every page of the app, at three widths in light and dark: axe-core finds no critical or serious
// violation, and no visible control (button, link, field) lies outside the viewport sideways.
// To check a new page, add one line to `pages`: its path (from the seeded ids), who views it
// (guest, owner or member) and, optionally, a setup that brings the page to the state to check.

interface Seed {
  teamId: string
  inviteToken: string
  taskId: string
  chatId: string
  /** An account with an authenticator app (signs in in two steps). */
  factorsEmail: string
}

interface PageCase {
  path: (seed: Seed) => string
  /** `factors`: an account with an authenticator app, owner of a team that requires two factors; `blocked`: a member of that team without one. */
  role: 'guest' | 'owner' | 'member' | 'factors' | 'blocked'
  setup?: (page: Page) => Promise<void>
}

const pages: PageCase[] = [
  { path: () => '/login', role: 'guest' },
  { path: () => '/signup', role: 'guest' },
  { path: seed => `/invite/${seed.inviteToken}`, role: 'guest' },
  { path: () => '/docs/agents', role: 'guest' },
  { path: () => '/docs/api', role: 'guest' },
  { path: () => '/app', role: 'owner' },
  { path: () => '/app', role: 'member' },
  { path: () => '/app/activity', role: 'owner' },
  { path: () => '/app/settings', role: 'owner' },
  { path: () => '/app/settings', role: 'member' },
  { path: () => '/app/settings/members', role: 'owner' },
  { path: () => '/app/settings/members', role: 'member' },
  { path: () => '/app/settings/api-keys', role: 'owner' },
  { path: () => '/app/settings/api-keys', role: 'owner', setup: showAllKeys },
  { path: () => '/app/settings/webhooks', role: 'owner' },
  { path: () => '/app/settings/webhooks', role: 'owner', setup: openDeliveries },
  { path: () => '/app/settings/api-log', role: 'owner' },
  { path: () => '/app/data/tasks', role: 'owner' },
  { path: () => '/app/data/tasks/new', role: 'owner' },
  { path: seed => `/app/data/tasks/${seed.taskId}`, role: 'owner' },
  { path: () => '/app/chat', role: 'owner' },
  { path: seed => `/app/chat/${seed.chatId}`, role: 'owner' },
  { path: seed => `/app/chat/${seed.chatId}`, role: 'owner', setup: converse },
  { path: () => '/login', role: 'guest', setup: passwordStep },
  { path: () => '/app/account/security', role: 'owner' },
  { path: () => '/app/account/security', role: 'factors' },
  { path: () => '/app/settings/security', role: 'owner' },
  { path: () => '/app/settings/security', role: 'member' },
  { path: () => '/app/settings/security', role: 'factors' },
  { path: () => '/app', role: 'blocked' },
]

/** Signs in with the password of an account that has a factor: the sign-in's second step. */
async function passwordStep(page: Page) {
  await page.getByLabel('E-mail').fill(seed.factorsEmail)
  await page.getByLabel('Password').fill('correct horse battery')
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await expect(page.getByTestId('second-factor')).toBeVisible()
}

/** Shows revoked and expired keys too (a rolled key and a revoked one are in the seed). */
async function showAllKeys(page: Page) {
  await page.getByRole('button', { name: 'Show all keys' }).click()
  await expect(page.getByText('Revoked', { exact: true }).first()).toBeAttached()
}

/** Opens the deliveries of the seed's endpoint for every event (the newest). */
async function openDeliveries(page: Page) {
  await page.getByRole('button', { name: 'Deliveries', exact: true }).last().click()
  await expect(page.getByTestId('webhook-deliveries').first()).toBeVisible()
}

/** Brings the chat to a conversation: a question, a query with its chart and table, and an answer. */
async function converse(page: Page) {
  model.enqueue(
    { toolCalls: [{ name: 'query_database', input: { sql: 'select status, count(*)::int as tasks from tasks group by status order by status' } }] },
    { text: 'All open tasks are **todo**.' },
  )
  await page.getByRole('textbox', { name: 'Your question' }).fill('How many tasks per status?')
  await page.keyboard.press('Enter')
  await expect(page.getByText('All open tasks are').last()).toBeVisible()
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible()
  // colours are judged once transitions (fades) have ended
  await page.waitForFunction(() => document.getAnimations().every(animation => animation.playState !== 'running'))
}

// each page's check stands alone: the two workers share them out (each with its own app and seed)
test.describe.configure({ mode: 'parallel' })

const widths = [390, 820, 1440]
// each page is loaded in dark (as a user whose system is dark gets it, server-rendered) and then
// switched to light, the scheme every other spec loads its pages in
const schemes = ['dark', 'light'] as const

let app: TestApp
let model: ScriptedModelServer
let seed: Seed
const sessions: Record<PageCase['role'], string> = { guest: '', owner: '', member: '', factors: '', blocked: '' }

test.beforeAll(async () => {
  model = await startScriptedModel()
  app = await startApp({ LLM_PROVIDER_API_KEY: 'test-key', LLM_PROVIDER_BASE_URL: model.url, LLM_MODEL: 'scripted-model' })
  const owner = await signUp(app, { email: uniqueEmail('a11y-owner'), name: 'Olive Owner' })
  const teamId = await createTeam(owner, 'Accessible Team')
  const member = await signUp(app, { email: uniqueEmail('a11y-member'), name: 'Mia Member' })
  await addMember(app, teamId, member, 'member')
  await member.put('/api/auth/current-team', { team_id: teamId })
  await owner.patch(`/api/teams/${teamId}`, { webhook_url: 'https://hooks.example.com/team' })

  const key = await expectCreated(owner, `/api/teams/${teamId}/api-keys`, { name: 'Nightly sync', expires_at: null })
  // a second key with a real, long name: the key list stays within its card at every width
  await expectCreated(owner, `/api/teams/${teamId}/api-keys`, { name: 'Zapier: onboarding automations for the customer support team', expires_at: null })
  // a rolled key (both of one name, linked) and a revoked one that made a webhook endpoint
  await expectCreated(owner, `/api/teams/${teamId}/api-keys/${key.id}/roll`, { expires_in_seconds: 3600 })
  const hooks = await expectCreated(owner, `/api/teams/${teamId}/api-keys`, { name: 'Hooks', scopes: { '*': 'read', 'webhooks': 'write' } })
  const subscribed = await fetch(`${app.url}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { 'authorization': `Bearer ${hooks.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://hooks.example.com/tasks', events: ['tasks.created'] }),
  })
  expect(subscribed.status).toBe(201)
  expect((await owner.patch(`/api/teams/${teamId}/api-keys/${hooks.id}`)).status).toBe(200)
  await expectCreated(owner, `/api/teams/${teamId}/webhooks/endpoints`, { url: 'https://hooks.example.com/all', events: ['*'] })
  const invitation = await expectCreated(owner, `/api/teams/${teamId}/invitations`, { email: uniqueEmail('invitee'), role: 'member' })
  const task = await fetch(`${app.url}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'authorization': `Bearer ${key.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Write the report' }),
  })
  expect(task.status).toBe(201)
  const chat = await expectCreated(owner, '/api/chats', {})
  // an account with an authenticator app whose team requires two factors of everyone, and a member
  // of that team who has none (refused)
  const factors = await signUp(app, { email: uniqueEmail('a11y-factors'), name: 'Fay Factors' })
  const strictTeamId = await createTeam(factors, 'Strict Team')
  await enrolTotp(factors, 'Phone')
  const policy = await factors.put(`/api/teams/${strictTeamId}/security-policy`, { require_two_factor: 'everyone', grace_days: 0 })
  expect(policy.status, JSON.stringify(policy.body)).toBe(200)
  const blocked = await signUp(app, { email: uniqueEmail('a11y-blocked'), name: 'Bo Blocked' })
  await addMember(app, strictTeamId, blocked, 'member')
  await blocked.put('/api/auth/current-team', { team_id: strictTeamId })
  seed = { teamId, inviteToken: String(invitation.invite_url).split('/').pop()!, taskId: (await task.json()).id, chatId: chat.id, factorsEmail: factors.user!.email }
  sessions.owner = owner.cookie
  sessions.member = member.cookie
  sessions.factors = factors.cookie
  sessions.blocked = blocked.cookie
})

test.afterAll(async () => {
  await app?.stop()
  await model?.close()
})

async function expectCreated(client: Client, path: string, body: unknown) {
  const answer = await client.post(path, body)
  expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201)
  return answer.body
}

/**
 * One page in both colour schemes (the page follows the system's scheme as it changes, so it is
 * loaded once, in the first) at the three widths each.
 */
async function check(browser: Browser, entry: PageCase, problems: string[]) {
  const path = entry.path(seed)
  const context = await browser.newContext({ colorScheme: schemes[0], viewport: { width: widths[0]!, height: 844 } })
  if (sessions[entry.role]) {
    const [name, value] = sessions[entry.role].split('=')
    await context.addCookies([{ name: name!, value: value!, url: app.url }])
  }
  const page = await context.newPage()
  await openPage(page, app.url, path)
  await expect(page, `${path} as ${entry.role}`).toHaveURL(`${app.url}${path}`)
  await entry.setup?.(page)
  for (const scheme of schemes) {
    await useColorScheme(page, scheme)
    for (const width of widths) {
      await page.setViewportSize({ width, height: width < 800 ? 844 : 900 })
      await expect(page.locator('[aria-busy="true"]')).toHaveCount(0)
      const where = `${path} as ${entry.role} at ${width}px ${scheme}`
      for (const violation of await seriousViolations(axeOn(page))) {
        problems.push(`${where}: ${violation.id} (${violation.impact}) ${violation.nodes.slice(0, 3).map(node => node.target.join(' ')).join(', ')}`)
      }
      for (const control of await controlsOutside(page)) problems.push(`${where}: ${control} is outside the viewport`)
    }
  }
  await context.close()
}

// one test per page (three widths in each colour scheme), so that a slow page stays well inside a test's time on a busy machine
for (const entry of pages) {
  test(`${entry.path({ teamId: ':team', inviteToken: ':token', taskId: ':id', chatId: ':id', factorsEmail: '' })} as ${entry.role}${entry.setup ? ` (${entry.setup.name})` : ''}, dark and light`, async ({ browser }) => {
    const problems: string[] = []
    await check(browser, entry, problems)
    expect(problems).toEqual([])
  })
}

test('at 390 px each activity row\'s history button is on the screen, with records and people of long names', async ({ browser }) => {
  const owner = await signUp(app, { email: uniqueEmail('a11y-history'), name: 'Bartholomew Featherstonehaugh-Montgomery' })
  const teamId = await createTeam(owner, 'History Team')
  const key = await expectCreated(owner, `/api/teams/${teamId}/api-keys`, { name: 'Nightly warehouse sync for the EU production cluster', expires_at: null })
  for (const title of ['Prepare the quarterly report for the board and the investors', 'Call']) {
    const created = await fetch(`${app.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'authorization': `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title }),
    })
    expect(created.status).toBe(201)
  }
  const fromBrowser = await owner.post(`/api/teams/${teamId}/records/tasks`, { title: 'Rewrite the onboarding guide for new support engineers' })
  expect(fromBrowser.status).toBe(201)

  const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
  const [name, value] = owner.cookie.split('=')
  await context.addCookies([{ name: name!, value: value!, url: app.url }])
  const page = await context.newPage()
  await openPage(page, app.url, '/app/activity')
  const table = page.getByTestId('activity-table')
  const historyButtons = table.getByRole('button', { name: /^History of / })
  await expect(historyButtons.first()).toBeVisible()
  expect(await historyButtons.count()).toBeGreaterThanOrEqual(3)
  const sideways = await page.evaluate(() => {
    const root = document.scrollingElement!
    const container = document.querySelector<HTMLElement>('[data-testid="activity-table"]')!
    return { page: root.scrollWidth - root.clientWidth, table: container.scrollWidth - container.clientWidth }
  })
  expect(sideways).toEqual({ page: 0, table: 0 })
  for (const button of await historyButtons.all()) {
    const box = (await button.boundingBox())!
    expect(box.x).toBeGreaterThanOrEqual(0)
    expect(box.x + box.width).toBeLessThanOrEqual(390)
  }
  await page.screenshot({ path: 'test-results/activity-390.png', fullPage: true })
  await context.close()
})
