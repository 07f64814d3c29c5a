// The delivery worker's settings: retries, timeout, poll interval, lease, and whether private networks may be reached.
import { privateNetworksAllowed } from '../http/url-guard'
import { setting } from '../settings'

export interface WebhookSettings {
  allowPrivateNetworks: boolean
  /** Delays before each retry, in seconds. */
  retrySchedule: readonly number[]
  timeoutMs: number
  pollIntervalMs: number
  /** How long a claimed delivery stays with its worker before another may take it over (that worker died). */
  leaseSeconds: number
  /** How often the auto-disable job runs. */
  maintenanceIntervalMs: number
}

/** Retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (with jitter). */
export const defaultRetrySchedule = [5, 300, 1800, 7200, 18000, 36000, 36000] as const

/** The worker's settings from runtimeConfig (WEBHOOK_ALLOW_PRIVATE_NETWORKS and the test-only knobs). */
export function webhookSettings(): WebhookSettings {
  const scheduleText = setting('webhookRetrySchedule')
  const schedule = scheduleText.split(',').map(Number)
  const isValidSchedule = schedule.every(delay => Number.isFinite(delay) && delay >= 0)
  const timeoutMs = Number(setting('webhookTimeoutMs')) || 15_000
  return {
    allowPrivateNetworks: privateNetworksAllowed(setting('webhookAllowPrivateNetworks'), import.meta.dev),
    retrySchedule: scheduleText && isValidSchedule ? schedule : defaultRetrySchedule,
    timeoutMs,
    pollIntervalMs: Number(setting('webhookPollIntervalMs')) || 1000,
    // long enough for the attempt (bounded by the timeout) and its record
    leaseSeconds: Number(setting('webhookLeaseSeconds')) || Math.ceil((timeoutMs * 2) / 1000) + 5,
    maintenanceIntervalMs: Number(setting('webhookMaintenanceIntervalMs')) || 60_000,
  }
}
