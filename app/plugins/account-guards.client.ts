import { AppReauthModal } from '#components'
import type { ReauthMethod } from '~/types/security'

/**
 * The one place every request of the browser goes through ($fetch, and useFetch which uses it),
 * so that each page need not handle the account's guards itself:
 * - `403 reauth_required` (a powerful action without a recent proof of identity): the "Confirm
 *   it's you" modal opens with the answer's `methods`; once confirmed, the same request is sent
 *   again and its answer goes to the caller, as if nothing had been asked. Requests refused
 *   together share one modal. Cancelled, the caller gets the refusal.
 * - `two_factor_required` (the team's policy refuses the person): the app shell shows why.
 * - `401 mfa_required` (a session still waiting for its second factor): back to the sign-in's
 *   second step.
 */
export default defineNuxtPlugin({
  name: 'account-guards',
  setup(nuxtApp) {
    const plain = globalThis.$fetch
    const confirmIdentity = useModal(AppReauthModal)
    const { markBlocked } = useTeamAccess()
    const router = useRouter()
    let confirming: Promise<boolean> | null = null

    function methodsOf(error: unknown): ReauthMethod[] {
      const listed = (error as { data?: { methods?: unknown } }).data?.methods
      if (!Array.isArray(listed)) return ['password', 'totp', 'passkey']
      return listed.map(method => (typeof method === 'string' ? method : (method as { type?: string } | null)?.type))
        .filter((method): method is ReauthMethod => method === 'password' || method === 'totp' || method === 'passkey')
    }

    /** Whether the refused request should be sent again. */
    async function answer(error: unknown, request: unknown): Promise<boolean> {
      const status = errorStatus(error)
      const code = errorCode(error)
      if (status === 403 && code === 'reauth_required') {
        confirming ??= nuxtApp.runWithContext(() => confirmIdentity({ methods: methodsOf(error) }))
          .then(Boolean)
          .finally(() => {
            confirming = null
          })
        return confirming
      }
      if (code === 'two_factor_required' && typeof request === 'string') {
        const teamId = teamOfRequest(request)
        if (teamId) markBlocked(teamId)
      }
      if (status === 401 && code === 'mfa_required') {
        const current = router.currentRoute.value
        if (current.path !== '/login') await nuxtApp.runWithContext(() => navigateTo({ path: '/login', query: { redirect: current.fullPath } }))
      }
      return false
    }

    async function guarded(request: Parameters<typeof plain>[0], options?: Parameters<typeof plain>[1]) {
      try {
        return await plain(request, options)
      }
      catch (error) {
        if (await answer(error, request)) return plain(request, options)
        throw error
      }
    }
    async function guardedRaw(request: Parameters<typeof plain.raw>[0], options?: Parameters<typeof plain.raw>[1]) {
      try {
        return await plain.raw(request, options)
      }
      catch (error) {
        if (await answer(error, request)) return plain.raw(request, options)
        throw error
      }
    }
    globalThis.$fetch = Object.assign(guarded, plain, { raw: guardedRaw }) as unknown as typeof plain
  },
})
