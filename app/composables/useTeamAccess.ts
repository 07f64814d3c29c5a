/**
 * Whether the current team refuses the signed-in person because its two-factor policy covers them
 * and they have no factor yet (`two_factor_required`): the app shell then shows why and how to
 * comply instead of the team's pages. Known from the team's routes' answers: the shell's own
 * (the sidebar's tables) and any other request that meets the refusal (`markBlocked`).
 * `recheck()` asks again, after enrolling a factor.
 */
export function useTeamAccess() {
  const { currentTeam } = useWorkspace()
  const blockedTeams = useState<string[]>('team-access:blocked', () => [])
  const isBlocked = computed(() => !!currentTeam.value && blockedTeams.value.includes(currentTeam.value.id))

  function markBlocked(teamId: string, blocked = true) {
    const others = blockedTeams.value.filter(id => id !== teamId)
    blockedTeams.value = blocked ? [...others, teamId] : others
  }

  async function recheck() {
    blockedTeams.value = []
    const teamId = currentTeam.value?.id
    if (teamId) await refreshNuxtData(`data-tables:${teamId}`)
  }

  return { isBlocked, markBlocked, recheck }
}

/** The team id of a team route's address (`/api/teams/{id}/...`), if it is one. */
export function teamOfRequest(url: string): string | null {
  return /^\/api\/teams\/([0-9a-f-]{36})(?:[/?]|$)/i.exec(url)?.[1] ?? null
}
