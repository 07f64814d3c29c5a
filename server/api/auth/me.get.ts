import type { Me } from '#shared/types/api'
import { isPending, requireSession } from '~~/server/utils/accounts/session-state'

// Answers at level 1 too (the sign-in page asks it while the second factor is due), without the teams then.
export default defineEventHandler(async (event): Promise<Me> => {
  const state = await requireSession(event, { pending: 'allow' })
  const security = { aal: state.aal, sudo_until: state.sudoUntil?.toISOString() ?? null, mfa_required: isPending(state) }
  if (security.mfa_required) return { user: state.user, teams: [], current_team_id: null, ...security }
  const client = createAuditedClient(await useDb(), { actorId: state.user.id, teamId: null, source: 'web' })
  const { teams, current } = await userTeams(client, state.currentTeamId)
  return { user: state.user, teams, current_team_id: current?.id ?? null, ...security }
})
