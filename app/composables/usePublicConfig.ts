export interface PublicConfig {
  chat_enabled: boolean
  /** The seeded demo sign-in, shown on the sign-in page; only in development, while the account exists. */
  demo_account: { email: string, password: string } | null
}

/** Public flags of the server (GET /api/config), fetched once per page load. */
export function usePublicConfig() {
  return useFetch<PublicConfig>('/api/config', { key: 'public-config', default: () => ({ chat_enabled: false, demo_account: null }) })
}
