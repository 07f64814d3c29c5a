// Pages under /app need a session; without one the visitor goes to sign-in and comes back.
export default defineNuxtRouteMiddleware(async (to) => {
  const { me, refresh } = useWorkspace()
  if (!me.value) await refresh()
  if (!me.value) return navigateTo({ path: '/login', query: { redirect: to.fullPath } })
})
