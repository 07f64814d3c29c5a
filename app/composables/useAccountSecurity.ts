import type { AsyncFetch } from '~/composables/useTeamApi'
import type { Factor, FactorList } from '~/types/security'

/**
 * The signed-in person's factors (GET /api/auth/factors), loaded once for every section of the
 * Security page that shows them; `passkeys` and `apps` are its parts as AppTableCard lists them.
 * `changed()` reloads what a change of factors touches: the factors, the sessions (the first
 * factor ends the other sessions and raises this one), the security log, and whether the current
 * team's policy still refuses this person.
 */
export function useAccountSecurity() {
  const requestFetch = useRequestFetch()
  const factors = useAsyncData<FactorList>('account-factors', () => requestFetch('/api/auth/factors'), { lazy: true })
  const { recheck } = useTeamAccess()

  const part = (type: Factor['type']): AsyncFetch<Factor[]> => ({
    data: computed(() => factors.data.value ? factors.data.value.factors.filter(factor => factor.type === type) : null),
    status: factors.status,
    error: factors.error,
    refresh: factors.refresh,
  })

  async function changed() {
    await Promise.all([refreshNuxtData(['account-factors', 'account-sessions', 'account-security-log']), recheck()])
  }

  return { factors, passkeys: part('passkey'), apps: part('totp'), changed }
}
