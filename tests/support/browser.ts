import type { Page } from '@playwright/test'

/** The password the e2e specs give the accounts they sign up. */
export const e2ePassword = 'correct horse battery'

/** Opens a page of the app and waits until Vue has hydrated it, so that typing is not lost. */
export async function openPage(page: Page, baseUrl: string, path: string) {
  await page.goto(`${baseUrl}${path}`)
  await page.waitForLoadState('networkidle')
  await page.waitForFunction(() => Boolean((document.querySelector('#__nuxt') as { __vue_app__?: unknown } | null)?.__vue_app__))
}

/** Signs in through the sign-in form, which then goes to `redirect`. */
export async function signInPage(page: Page, baseUrl: string, email: string, redirect: string, password = e2ePassword) {
  await openPage(page, baseUrl, `/login?redirect=${encodeURIComponent(redirect)}`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}
