import type { Me } from '#shared/types/api'

/**
 * The signed-in user, their teams and the current team, shared by every page.
 * `can(permission)` answers for the current team's role, as the server's authUser does.
 */
export function useWorkspace() {
  const me = useState<Me | null>('workspace:me', () => null)
  const requestFetch = useRequestFetch()

  async function refresh(): Promise<Me | null> {
    try {
      me.value = await requestFetch<Me>('/api/auth/me')
    }
    catch (error) {
      me.value = null
      // only a 401 means signed out: while the server cannot answer (503, its database is down)
      // the page shows that error rather than the sign-in form
      const status = (error as { statusCode?: number }).statusCode ?? 0
      if (status >= 500) throw createError({ statusCode: status, statusMessage: 'The service is unavailable; try again in a few seconds', fatal: true })
    }
    return me.value
  }

  const currentTeam = computed(() => me.value?.teams.find(team => team.id === me.value?.current_team_id) ?? null)
  const role = computed(() => currentTeam.value?.role ?? null)

  async function switchTeam(teamId: string) {
    await $fetch('/api/auth/current-team', { method: 'PUT', body: { team_id: teamId } })
    await refresh()
  }

  return {
    me,
    user: computed(() => me.value?.user ?? null),
    teams: computed(() => me.value?.teams ?? []),
    currentTeam,
    role,
    can: (permission: Permission) => can(role.value, permission),
    refresh,
    switchTeam,
  }
}
