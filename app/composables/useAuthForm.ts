/**
 * The sign-in and sign-up forms' submission, for AppForm: posts the fields to `endpoint`, loads
 * the workspace, then opens the page asked for in `?redirect=` (only a path of this app).
 */
export function useAuthForm(endpoint: '/api/auth/login' | '/api/auth/signup') {
  const route = useRoute()
  const { refresh } = useWorkspace()
  return async (body: Record<string, unknown>) => {
    await $fetch(endpoint, { method: 'POST', body })
    await refresh()
    await navigateTo(safeRedirect(route.query.redirect))
  }
}
