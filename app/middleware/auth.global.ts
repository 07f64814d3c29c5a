// Pages under /app need a session; without one the visitor goes to sign-in and comes back.
// A page may name a permission in its meta (definePageMeta({ permission: 'api_keys.view' }));
// without it the visitor is redirected to meta.permissionRedirect (default /app).
export default defineNuxtRouteMiddleware(async (to) => {
  if (!to.path.startsWith('/app')) return
  const { me, refresh, can } = useWorkspace()
  if (!me.value) await refresh()
  // signed out, or signed in with the password of an account whose second factor is still due
  if (!me.value || me.value.mfa_required) return navigateTo({ path: '/login', query: { redirect: to.fullPath } })
  const permission = to.meta.permission
  if (permission && !can(permission)) return navigateTo(to.meta.permissionRedirect ?? '/app')
})
