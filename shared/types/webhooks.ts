import type { WebhookDeliverySummary } from './invitations'

/** A team's webhook receiver and the events it is subscribed to. */
export interface WebhookEndpoint {
  id: string
  url: string
  description: string
  events: string[]
  enabled: boolean
  disabled_reason: string | null
  disabled_at: string | null
  failing_since: string | null
  created_at: string
  updated_at: string
  /** The API key that subscribed it through the public API (null: made in Settings > Webhooks). */
  created_by_api_key_id: string | null
  created_by_api_key_name: string | null
}

/** One attempt to deliver: the receiver's status code (or the error), how long it took and the start of its answer. */
export interface WebhookAttempt {
  attempt: number
  status_code: number | null
  error: string | null
  duration_ms: number
  response_body: string | null
  created_at: string
}

/** A delivery with its attempts, oldest attempt first. */
export interface WebhookDelivery extends WebhookDeliverySummary {
  endpoint_id: string | null
  attempts_list: WebhookAttempt[]
}
