import { expect, test, type BrowserContext, type Page } from '@playwright/test'
import type { TestApp } from '../support/app'
import { e2ePassword, openPage } from '../support/browser'
import { enrolTotp, totpCode } from '../support/factors'
import { addMember, createTeam, signUp, uniqueEmail, type Client } from '../support/http'
import { startApp } from '../support/app'
import { startStallingProxy } from '../support/tcp-proxy'

// The account's security in a real browser: passkeys with Chromium's virtual authenticator (the
// DevTools Protocol's WebAuthn domain), authenticator codes computed here from the secret the page
// shows (RFC 6238), recovery codes, the "Confirm it's you" modal in front of a powerful action, and
// a team's two-factor policy seen by its owner and by a member it refuses.
//
// WebAuthn needs a domain: the app runs with BASE_URL http://localhost:<port> (its relying party),
// and the browser opens it there.

let app: TestApp
let base: string

test.beforeAll(async () => {
  app = await startApp()
  base = app.url.replace('127.0.0.1', 'localhost')
  await app.restart({ NUXT_BASE_URL: base })
})
test.afterAll(async () => {
  await app?.stop()
})

/** A virtual platform authenticator (resident keys, user verification) for the page's browser. */
async function addAuthenticator(page: Page) {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
  // observes (without changing) the page's requests for a passkey: whether the sign-in page's
  // autofill request is waiting in the browser
  await page.addInitScript(() => {
    const credentials = navigator.credentials
    const get = credentials.get.bind(credentials)
    const marked = window as unknown as { autofillWaiting: boolean }
    marked.autofillWaiting = false
    credentials.get = (options?: CredentialRequestOptions) => {
      const request = get(options)
      if (options?.mediation === 'conditional') {
        marked.autofillWaiting = true
        const done = () => {
          marked.autofillWaiting = false
        }
        request.then(done, done)
      }
      return request
    }
  })
  return { cdp, authenticatorId }
}

/** Waits until the sign-in page's autofill request for a passkey is open in the browser. */
async function autofillWaiting(page: Page) {
  await page.waitForFunction(() => (window as unknown as { autofillWaiting: boolean }).autofillWaiting)
}

/** A browser context signed in with the client's session (as if it had signed in there). */
async function contextFor(page: Page, client: Client) {
  const [name, value] = client.cookie.split('=')
  await page.context().addCookies([{ name: name!, value: value!, url: base }])
}

async function signInWithPassword(page: Page, email: string, redirect = '/app') {
  await openPage(page, base, `/login?redirect=${encodeURIComponent(redirect)}`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(e2ePassword)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

async function signOut(page: Page) {
  await page.getByTestId('user-menu').click()
  await page.getByRole('menuitem', { name: 'Sign out', exact: true }).click()
  await expect(page).toHaveURL(`${base}/login`)
}

/** The session's level and whether it still owes its second factor, as the server says. */
async function me(context: BrowserContext) {
  const answer = await context.request.get(`${base}/api/auth/me`)
  return { status: answer.status(), body: answer.ok() ? await answer.json() : null }
}

/** Closes the recovery codes modal the first factor brings, and answers the codes it showed. */
async function keepRecoveryCodes(page: Page): Promise<string[]> {
  const dialog = page.getByRole('dialog', { name: 'Your recovery codes' })
  await expect(dialog).toBeVisible()
  const codes = (await dialog.getByTestId('recovery-codes').getByRole('listitem').allInnerTexts()).map(code => code.trim())
  expect(codes).toHaveLength(10)
  // it cannot be dismissed until the codes are stored
  await page.keyboard.press('Escape')
  await expect(dialog).toBeVisible()
  await expect(dialog.getByRole('button', { name: 'Done' })).toBeDisabled()
  const download = page.waitForEvent('download')
  await dialog.getByRole('button', { name: 'Download .txt' }).click()
  const file = await download
  expect(file.suggestedFilename()).toBe('team-workspace-recovery-codes.txt')
  const { readFile } = await import('node:fs/promises')
  const text = await readFile((await file.path())!, 'utf8')
  for (const code of codes) expect(text).toContain(code)
  await dialog.getByRole('button', { name: 'Done' }).click()
  await expect(dialog).toBeHidden()
  return codes
}

/** A code of the app for `secret` that the server has not seen yet: the next 30-second step once `used` is the current one. */
async function freshCode(secret: string, used: string[]): Promise<string> {
  await expect.poll(() => used.includes(totpCode(secret)), { timeout: 35_000, intervals: [500] }).toBe(false)
  return totpCode(secret)
}

test('a passkey is registered on the Security page, then signs in without a password, and as the second factor after one', async ({ page }) => {
  const owner = await signUp({ url: base }, { name: 'Pat Passkey', password: e2ePassword })
  await createTeam(owner, 'Passkey Team')
  const { cdp, authenticatorId } = await addAuthenticator(page)

  await signInWithPassword(page, owner.user!.email, '/app/account/security')
  await expect(page).toHaveURL(`${base}/app/account/security`)
  await expect(page.getByText('No passkeys yet.')).toBeVisible()
  await expect(page.getByTestId('recovery-codes-remaining')).toContainText('Add a passkey or an authenticator app first')

  await page.getByRole('button', { name: 'Add a passkey' }).click()
  const nameDialog = page.getByRole('dialog', { name: 'Add a passkey' })
  await nameDialog.getByLabel('Name').fill('Work laptop')
  await nameDialog.getByRole('button', { name: 'Create passkey' }).click()
  // the account's first factor: its recovery codes, once
  await keepRecoveryCodes(page)
  await expect(page.getByTestId('passkey-table')).toContainText('Work laptop')
  await expect(page.getByTestId('recovery-codes-remaining')).toContainText('10 of 10 codes left')
  expect((await me(page.context())).body).toMatchObject({ aal: 2, mfa_required: false })
  await expect(page.getByTestId('security-log')).toContainText('Factor added with passkey')

  // without a password, through the browser's own offer of the passkey in the sign-in page's
  // autofill (conditional mediation): the virtual authenticator answers it at once, with no click
  await signOut(page)
  await expect(page).toHaveURL(`${base}/app`)
  expect((await me(page.context())).body).toMatchObject({ aal: 2, user: { email: owner.user!.email } })

  // the button: the authenticator waits for the person (no automatic presence) while the page
  // loads, so that the autofill's request stays open until the button's request replaces it
  await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false })
  await signOut(page)
  await autofillWaiting(page)
  await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true })
  const buttonOptions = page.waitForRequest(request => request.url().endsWith('/api/auth/passkey/options'))
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  await buttonOptions
  await expect(page).toHaveURL(`${base}/app`)
  expect((await me(page.context())).body).toMatchObject({ aal: 2, user: { email: owner.user!.email } })

  // the password, then the passkey as the second factor
  await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false })
  await signOut(page)
  await autofillWaiting(page)
  await page.getByLabel('E-mail').fill(owner.user!.email)
  await page.getByLabel('Password').fill(e2ePassword)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  const secondStep = page.getByTestId('second-factor')
  await expect(secondStep).toBeVisible()
  expect((await me(page.context())).body).toMatchObject({ aal: 1, mfa_required: true })
  // the session waits for its second factor: team pages send it back here
  await openPage(page, base, '/app/settings')
  await expect(page).toHaveURL(`${base}/login?redirect=/app/settings`)
  await expect(secondStep).toBeVisible()
  await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true })
  await secondStep.getByRole('button', { name: 'Use your passkey' }).click()
  await expect(page).toHaveURL(`${base}/app/settings`)
  expect((await me(page.context())).body).toMatchObject({ aal: 2, mfa_required: false })
  const log = await page.context().request.get(`${base}/api/auth/security-log`)
  const entries = (await log.json()).entries as { event: string, method: string | null }[]
  expect(entries.filter(entry => entry.event === 'sign_in').map(entry => entry.method)).toEqual(['passkey', 'passkey', 'passkey', 'password'])
})

/**
 * Signs in with a passkey on the sign-in page at `origin` and finds it refused: the server answers
 * 401, the page says so and stays on the sign-in page, and nobody is signed in.
 */
async function passkeyRefused(page: Page, origin: string) {
  const refused = page.waitForResponse(response => response.url().endsWith('/api/auth/passkey/login'))
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  expect((await refused).status()).toBe(401)
  await expect(page.getByText('The passkey was not accepted')).toBeVisible()
  await expect(page).toHaveURL(`${origin}/login`)
  // asked of the app itself, not through another origin's relay: a cookie belongs to the host, not
  // the port, so the browser would send a session made on either origin
  expect((await page.context().request.get(`${base}/api/auth/me`)).status()).toBe(401)
}

/** An owner of a team, signed in on the page, whose first factor is a passkey in the page's virtual authenticator. */
async function ownerWithPasskey(page: Page, name: string, team: string) {
  const owner = await signUp({ url: base }, { name, password: e2ePassword })
  await createTeam(owner, team)
  const { cdp, authenticatorId } = await addAuthenticator(page)
  await contextFor(page, owner)
  await openPage(page, base, '/app/account/security')
  await page.getByRole('button', { name: 'Add a passkey' }).click()
  await page.getByRole('dialog', { name: 'Add a passkey' }).getByRole('button', { name: 'Create passkey' }).click()
  await keepRecoveryCodes(page)
  return { owner, cdp, authenticatorId }
}

test('a passkey is refused without user verification, and from another origin', async ({ page, browser }) => {
  const { cdp, authenticatorId } = await ownerWithPasskey(page, 'Uma Unverified', 'Refusals Team')
  // no automatic presence while the sign-in page loads: its autofill request stays open
  await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false })
  await signOut(page)

  // the authenticator no longer verifies the person; the options are changed in transit so that
  // the browser still answers, with the user-verified flag off: the server refuses the assertion
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false })
  await page.route('**/api/auth/passkey/options', async (route) => {
    const answer = await route.fetch()
    const options = await answer.json()
    await route.fulfill({ response: answer, json: { ...options, userVerification: 'discouraged' } })
  })
  await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true })
  await passkeyRefused(page, base)
  // the page may be asking for options again (its autofill starts over): that request is answered before the route goes
  await page.unrouteAll({ behavior: 'wait' })
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true })

  // the same account's passkey, used by a page of another origin: the app's own pages served on
  // another port (a plain TCP relay), so that the relying party (localhost) is the same and the
  // browser answers, but the response says it was made elsewhere: the server refuses it
  const relay = await startStallingProxy('127.0.0.1', Number(new URL(app.url).port))
  const otherOrigin = `http://localhost:${relay.port}`
  const credentials = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
  const elsewhere = await browser.newContext()
  const other = await elsewhere.newPage()
  const { cdp: otherCdp, authenticatorId: otherAuthenticator } = await addAuthenticator(other)
  await otherCdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId: otherAuthenticator, enabled: false })
  for (const credential of credentials.credentials) await otherCdp.send('WebAuthn.addCredential', { authenticatorId: otherAuthenticator, credential })
  await openPage(other, otherOrigin, '/login')
  await otherCdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId: otherAuthenticator, enabled: true })
  await passkeyRefused(other, otherOrigin)
  await elsewhere.close()
  await relay.close()
})

test('a passkey\'s answer signs in once, and not after its challenge has expired', async ({ page, browser }) => {
  const { owner, cdp, authenticatorId } = await ownerWithPasskey(page, 'Rex Replay', 'Replay Team')

  // the browser's answer as it went to the server, with the cookie that binds its challenge
  const sent: { body: string, cookie: string }[] = []
  await page.route('**/api/auth/passkey/login', async (route) => {
    sent.push({ body: route.request().postData() ?? '', cookie: (await route.request().allHeaders()).cookie ?? '' })
    await route.continue()
  })
  await signOut(page)
  await expect(page).toHaveURL(`${base}/app`)
  expect(sent).toHaveLength(1)
  expect(sent[0]!.cookie).toContain('tws-webauthn=')
  // the same answer again, from another browser with the same cookie: its challenge was used
  const elsewhere = await browser.newContext()
  const replayed = await elsewhere.request.post(`${base}/api/auth/passkey/login`, {
    headers: { 'content-type': 'application/json', 'cookie': sent[0]!.cookie, 'origin': base },
    data: sent[0]!.body,
  })
  expect(replayed.status()).toBe(401)
  expect((await elsewhere.request.get(`${base}/api/auth/me`)).status()).toBe(401)
  await elsewhere.close()
  await page.unroute('**/api/auth/passkey/login')

  // a challenge past its five minutes: the answer to it is refused, and nobody is signed in
  await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false })
  await signOut(page)
  await autofillWaiting(page)
  await page.route('**/api/auth/passkey/login', async (route) => {
    await app.db.query(`update public.webauthn_challenges set expires_at = now() - interval '1 second' where purpose = 'sign_in'`)
    await route.continue()
  })
  await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: true })
  await passkeyRefused(page, base)
  // one sign-in in all: the first answer's
  const { rows } = await app.db.query(`select method from public.security_events where user_id = $1 and event = 'sign_in'`, [owner.user!.id])
  expect(rows.map(row => row.method)).toEqual(['passkey'])
})

test('an authenticator app: set up from the secret the page shows, then its codes and a recovery code sign in, each code once', async ({ page }) => {
  const person = await signUp({ url: base }, { name: 'Toni Totp', password: e2ePassword })
  await createTeam(person, 'Codes Team')
  await signInWithPassword(page, person.user!.email, '/app/account/security')
  await expect(page).toHaveURL(`${base}/app/account/security`)

  await page.getByRole('button', { name: 'Set up an app' }).click()
  const dialog = page.getByRole('dialog', { name: 'Set up an authenticator app' })
  await dialog.getByLabel('Name').fill('Phone')
  await dialog.getByRole('button', { name: 'Continue' }).click()
  await expect(dialog.getByTestId('totp-qr').locator('svg')).toBeVisible()
  const secret = await dialog.getByLabel('Secret key').inputValue()
  expect(secret).toMatch(/^[A-Z2-7]{32}$/)
  // a wrong code is refused, with the reason
  const enrolmentCode = totpCode(secret)
  await dialog.getByLabel('Code from the app').fill(String((Number(enrolmentCode) + 1) % 1_000_000).padStart(6, '0'))
  await dialog.getByRole('button', { name: 'Verify and turn on' }).click()
  await expect(dialog.getByText('This code is wrong, expired or already used')).toBeVisible()
  const used = [totpCode(secret)]
  await dialog.getByLabel('Code from the app').fill(used[0]!)
  await dialog.getByRole('button', { name: 'Verify and turn on' }).click()
  const codes = await keepRecoveryCodes(page)
  await expect(page.getByTestId('totp-table')).toContainText('Phone')
  await expect(page.getByText(secret)).toHaveCount(0)

  // the password, then a code of the app (not the one that verified it)
  await signOut(page)
  await signInWithPassword(page, person.user!.email)
  const secondStep = page.getByTestId('second-factor')
  await expect(secondStep.getByLabel('Authentication code')).toBeVisible()
  const code = await freshCode(secret, used)
  used.push(code)
  await secondStep.getByLabel('Authentication code').fill(code)
  await secondStep.getByRole('button', { name: 'Verify' }).click()
  await expect(page).toHaveURL(`${base}/app`)

  // the password, then a recovery code; the same code a second time is refused
  for (const attempt of ['first', 'again'] as const) {
    await signOut(page)
    await signInWithPassword(page, person.user!.email)
    await secondStep.getByRole('button', { name: 'Use a recovery code' }).click()
    await secondStep.getByLabel('Recovery code').fill(codes[0]!)
    await secondStep.getByRole('button', { name: 'Verify' }).click()
    if (attempt === 'first') {
      await expect(page).toHaveURL(`${base}/app`)
    }
    else {
      await expect(secondStep.getByText('This code is wrong, expired or already used')).toBeVisible()
      expect((await me(page.context())).body).toMatchObject({ mfa_required: true })
    }
  }
  await secondStep.getByRole('button', { name: 'Use your passkey or app instead' }).click()
  await secondStep.getByLabel('Authentication code').fill(await freshCode(secret, used))
  await secondStep.getByRole('button', { name: 'Verify' }).click()
  await expect(page).toHaveURL(`${base}/app`)

  await openPage(page, base, '/app/account/security')
  await expect(page.getByTestId('recovery-codes-remaining')).toContainText('9 of 10 codes left')
  const log = page.getByTestId('security-log')
  await expect(log).toContainText('Recovery code used')
  await expect(log).toContainText('Signed in with authenticator app')
  await expect(log).toContainText('Failed sign-in')
  for (const code of codes) await expect(log).not.toContainText(code)
})

test('creating a key after the confirmation window closed asks who is there, then creates the key without starting again', async ({ page }) => {
  const owner = await signUp({ url: base }, { name: 'Sam Sudo', password: e2ePassword })
  const teamId = await createTeam(owner, 'Sudo Team')
  await contextFor(page, owner)
  // fifteen minutes later: the session's window for powerful actions has closed
  await app.db.query('update public.user_sessions set sudo_until = now() - interval \'1 second\' where user_id = $1', [owner.user!.id])

  await openPage(page, base, '/app/settings/api-keys')
  await page.getByRole('button', { name: 'Create Key' }).first().click()
  const createDialog = page.getByRole('dialog', { name: 'Create API key' })
  await createDialog.getByLabel('Name').fill('Nightly sync')
  await createDialog.getByRole('button', { name: 'Create key' }).click()

  const reauth = page.getByRole('dialog', { name: 'Confirm it\'s you' })
  await expect(reauth).toBeVisible()
  await reauth.getByLabel('Password').fill('not the password')
  await reauth.getByRole('button', { name: 'Confirm' }).click()
  await expect(reauth.getByText('password: is wrong')).toBeVisible()
  await reauth.getByLabel('Password').fill(e2ePassword)
  await reauth.getByRole('button', { name: 'Confirm' }).click()
  await expect(reauth).toBeHidden()

  // the key the person asked for is made, once
  const secretDialog = page.getByRole('dialog', { name: 'Your new API key' })
  await expect(secretDialog).toBeVisible()
  const keys = await owner.get(`/api/teams/${teamId}/api-keys`)
  expect(keys.status).toBe(200)
  expect((keys.body as { name: string }[]).map(key => key.name)).toEqual(['Nightly sync'])
  const log = await owner.get('/api/auth/security-log')
  expect(log.body.entries[0]).toMatchObject({ event: 'reauth', method: 'password' })
})

test('an owner requires two factors for everyone; a member without one is told why, sets up an app and sees the team again', async ({ browser }) => {
  const owner = await signUp({ url: base }, { name: 'Olga Owner', password: e2ePassword })
  const teamId = await createTeam(owner, 'Policy Team')
  const member = await signUp({ url: base }, { email: uniqueEmail('member'), name: 'Milo Member', password: e2ePassword })
  await addMember(app, teamId, member, 'member')
  await member.put('/api/auth/current-team', { team_id: teamId })

  const ownerContext = await browser.newContext()
  const ownerPage = await ownerContext.newPage()
  await contextFor(ownerPage, owner)
  await openPage(ownerPage, base, '/app/settings/security')
  const policy = ownerPage.getByTestId('security-policy')
  await policy.getByRole('radio', { name: 'Everyone' }).check()
  await policy.getByRole('button', { name: 'Save policy' }).click()
  await ownerPage.getByRole('dialog', { name: 'Require two factors for everyone?' }).getByRole('button', { name: 'Turn on' }).click()
  // an owner without a factor of their own cannot require one
  await expect(policy.getByText('Add a factor to your own account first')).toBeVisible()
  await expect(policy.getByRole('link', { name: 'Go to your security settings' })).toBeVisible()
  expect((await owner.get(`/api/teams/${teamId}/security-policy`)).body).toMatchObject({ require_two_factor: 'off' })

  await enrolTotp(owner, 'Owner phone')
  await contextFor(ownerPage, owner)
  await openPage(ownerPage, base, '/app/settings/security')
  await policy.getByRole('radio', { name: 'Everyone' }).check()
  await policy.getByRole('button', { name: 'Save policy' }).click()
  const confirm = ownerPage.getByRole('dialog', { name: 'Require two factors for everyone?' })
  await expect(confirm).toContainText('Policy Team')
  await confirm.getByRole('button', { name: 'Turn on' }).click()
  await expect(ownerPage.getByTestId('security-policy-enforced')).toContainText('Enforced since')
  const nonCompliant = ownerPage.getByTestId('non-compliant-table')
  await expect(nonCompliant).toContainText('Milo Member')
  await expect(nonCompliant).not.toContainText('Olga Owner')
  const activity = await owner.get(`/api/teams/${teamId}/activity`)
  expect(JSON.stringify(activity.body)).toContain('everyone')

  const memberContext = await browser.newContext()
  const memberPage = await memberContext.newPage()
  await contextFor(memberPage, member)
  await openPage(memberPage, base, '/app/settings/members')
  const blocked = memberPage.getByTestId('two-factor-required')
  await expect(blocked).toContainText('Policy Team requires two-factor authentication')
  await expect(blocked).toContainText('every member')
  await expect(memberPage.getByTestId('members-table')).toHaveCount(0)
  await blocked.getByRole('link', { name: 'Set up two-factor authentication' }).click()
  await expect(memberPage).toHaveURL(`${base}/app/account/security`)
  await memberPage.getByRole('button', { name: 'Set up an app' }).click()
  const dialog = memberPage.getByRole('dialog', { name: 'Set up an authenticator app' })
  await dialog.getByRole('button', { name: 'Continue' }).click()
  const secret = await dialog.getByLabel('Secret key').inputValue()
  await dialog.getByLabel('Code from the app').fill(totpCode(secret))
  await dialog.getByRole('button', { name: 'Verify and turn on' }).click()
  await keepRecoveryCodes(memberPage)

  await memberPage.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Settings' }).click()
  await memberPage.getByRole('link', { name: 'Members' }).click()
  await expect(memberPage.getByTestId('members-table')).toContainText('Olga Owner')
  await expect(memberPage.getByTestId('two-factor-required')).toHaveCount(0)

  await openPage(ownerPage, base, '/app/settings/security')
  await expect(ownerPage.getByText('Everyone the policy covers has a second factor.')).toBeVisible()
  await ownerContext.close()
  await memberContext.close()
})
