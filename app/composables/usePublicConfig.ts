export interface PublicConfig {
  chat_enabled: boolean
}

/** Public flags of the server (GET /api/config), fetched once per page load. */
export function usePublicConfig() {
  return useFetch<PublicConfig>('/api/config', { key: 'public-config', default: () => ({ chat_enabled: false }) })
}
