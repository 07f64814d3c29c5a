import type { FactorChoice } from '~/types/security'

/**
 * The sign-in and sign-up forms' submission, for AppForm: posts the fields to `endpoint`, loads
 * the workspace, then opens the page asked for in `?redirect=` (only a path of this app). When
 * the account has a second factor, the sign-in answers `mfa_required` with its factors instead:
 * `onSecondFactor` receives them, and the page asks for one before going on.
 */
export function useAuthForm(endpoint: '/api/auth/login' | '/api/auth/signup', onSecondFactor?: (factors: FactorChoice[]) => void) {
  const signedIn = useSignedIn()
  return async (body: Record<string, unknown>) => {
    const answer = await $fetch<{ mfa_required?: boolean, factors?: FactorChoice[] }>(endpoint, { method: 'POST', body })
    if (answer?.mfa_required && onSecondFactor) return onSecondFactor(answer.factors ?? [])
    await signedIn()
  }
}

/** What follows a completed sign-in: the workspace loads, and the page asked for in `?redirect=` opens. */
export function useSignedIn() {
  const route = useRoute()
  const { refresh } = useWorkspace()
  return async () => {
    await refresh()
    await navigateTo(safeRedirect(route.query.redirect))
  }
}
