import type { AsyncDataRequestStatus } from '#app'

type Body = Record<string, unknown>

/** A loaded route as AppAsyncState shows it (useTeamFetch's result): its data, status and error, and how to load it again. */
export interface AsyncFetch<T> {
  data: Readonly<Ref<T | null | undefined>>
  status: Readonly<Ref<AsyncDataRequestStatus>>
  error: Readonly<Ref<unknown>>
  refresh: () => Promise<unknown>
}

/**
 * The current team's routes, from one place: `url('/members')` is `/api/teams/{current}/members`,
 * `request(path, { method, body })` sends to it (with the session, also during the server's render), `refresh(path)` reloads every useTeamFetch of
 * that path (its key is the URL).
 */
export function useTeamApi() {
  const { currentTeam } = useWorkspace()
  const teamId = computed(() => currentTeam.value?.id ?? '')
  const url = (path: string) => `/api/teams/${teamId.value}${path}`
  // while rendering on the server, a fetch that carries the visitor's session cookie (the
  // browser's own $fetch sends it anyway)
  const requestFetch = useRequestFetch()
  return {
    teamId,
    url,
    request: <T = unknown>(path: string, options: { method?: 'POST' | 'PUT' | 'PATCH' | 'DELETE', body?: Body } = {}) =>
      requestFetch(url(path), options) as Promise<T>,
    refresh: (path: string) => refreshNuxtData(url(path)),
  }
}

/**
 * Loads a route of the current team (`useTeamFetch<Member[]>('/members')`) without blocking the
 * page, again when the team changes; returns useAsyncData's `{ data, status, error, refresh }`,
 * which `<AppAsyncState :fetched="…">` displays. `immediate: false` leaves it unloaded (e.g. without permission).
 */
export function useTeamFetch<T>(path: MaybeRefOrGetter<string>, options: { immediate?: boolean } = {}) {
  const { url, request } = useTeamApi()
  const key = computed(() => url(toValue(path)))
  return useAsyncData<T>(key, () => request<T>(toValue(path)), { lazy: true, immediate: options.immediate ?? true })
}
