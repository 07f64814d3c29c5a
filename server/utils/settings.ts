// The documented variable names (DATABASE_URL, LLM_PROVIDER_API_KEY, ...) are read as well as
// Nuxt's NUXT_-prefixed ones (runtimeConfig). Nitro freezes the runtime config at start, so the
// plain names are looked up here rather than copied into it.
const plainNames = {
  databaseUrl: 'DATABASE_URL',
  databasePrepare: 'DATABASE_PREPARE',
  databaseDirectUrl: 'DATABASE_DIRECT_URL',
  metricsToken: 'METRICS_TOKEN',
  appSecret: 'APP_SECRET',
  baseUrl: 'BASE_URL',
  llmProviderApiKey: 'LLM_PROVIDER_API_KEY',
  llmProviderBaseUrl: 'LLM_PROVIDER_BASE_URL',
  llmModel: 'LLM_MODEL',
  chatWebSearchUrl: 'CHAT_WEB_SEARCH_URL',
  chatDatabaseUrl: 'CHAT_DATABASE_URL',
  chatTeamMonthlyTokens: 'CHAT_TEAM_MONTHLY_TOKENS',
  chatMaxQueryCost: 'CHAT_MAX_QUERY_COST',
  webhookAllowPrivateNetworks: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
  webhookRetrySchedule: 'WEBHOOK_RETRY_SCHEDULE',
  webhookTimeoutMs: 'WEBHOOK_TIMEOUT_MS',
  webhookPollIntervalMs: 'WEBHOOK_POLL_INTERVAL_MS',
  webhookLeaseSeconds: 'WEBHOOK_LEASE_SECONDS',
  webhookMaintenanceIntervalMs: 'WEBHOOK_MAINTENANCE_INTERVAL_MS',
  activityPurgeIntervalMs: 'ACTIVITY_PURGE_INTERVAL_MS',
  apiRateLimit: 'API_RATE_LIMIT',
  apiRateWindowSeconds: 'API_RATE_WINDOW_SECONDS',
  // The API log: 'off' records nothing (Request-Id stays); the buffer's size and flush interval;
  // the writer's own connection (default DATABASE_URL); the retention job's interval.
  apiLog: 'API_LOG',
  apiLogBufferSize: 'API_LOG_BUFFER_SIZE',
  apiLogFlushMs: 'API_LOG_FLUSH_MS',
  apiLogDatabaseUrl: 'API_LOG_DATABASE_URL',
  apiLogRetentionIntervalMs: 'API_LOG_RETENTION_INTERVAL_MS',
} as const

export type SettingName = keyof typeof plainNames

/** A setting's value: the runtimeConfig key (NUXT_ name) first, else the documented plain name, else ''. */
export function setting(name: SettingName): string {
  const config = useRuntimeConfig() as unknown as Record<string, unknown>
  return String(config[name] || process.env[plainNames[name]] || '')
}
