/**
 * The sign-in and sign-up forms' submission: posts the fields to `endpoint`, loads the workspace,
 * then opens the page asked for in `?redirect=` (only a path of this app). `pending`/`error` as useMutation.
 */
export function useAuthForm(endpoint: '/api/auth/login' | '/api/auth/signup') {
  const route = useRoute()
  const { refresh } = useWorkspace()
  const { pending, error, run } = useMutation()
  const submit = (body: Record<string, unknown>) => run(async () => {
    await $fetch(endpoint, { method: 'POST', body })
    await refresh()
    await navigateTo(safeRedirect(route.query.redirect))
  })
  return { pending, error, submit }
}
