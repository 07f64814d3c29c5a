// The webhook outbox on prom-client's default registry: queue depth and oldest pending age (read from
// the database when scraped) and the delay from an event's commit to its delivery.
import { Gauge, Histogram, register } from 'prom-client'
import type { Queryable } from '../db/db-drivers'

export interface WebhookMetrics {
  /** Seconds from the write that queued a delivery to the receiver's 2xx answer, per successful attempt. */
  deliveryLatency: Histogram
  queueDepth: Gauge
  oldestPendingAge: Gauge
}

interface QueueState {
  depth: number
  oldestSeconds: number
}

// one holder per process, also across dev reloads of this module (the metrics outlive them)
const holder = globalThis as typeof globalThis & { __webhookMetricsDb?: Queryable }

let lastRead: { at: number, state: Promise<QueueState> } | undefined

/** Both gauges come from one statement, read at most once a second (an OR, so that it can read both partial indexes). */
function queueState(): Promise<QueueState> {
  const db = holder.__webhookMetricsDb
  if (!db) return Promise.resolve({ depth: 0, oldestSeconds: 0 })
  if (!lastRead || Date.now() - lastRead.at > 1000) {
    const state = db.query<QueueState>(
      `select count(*)::int as depth,
              coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as "oldestSeconds"
       from public.webhook_deliveries where status = 'pending' or status = 'delivering'`,
    ).then(result => result.rows[0]!)
    lastRead = { at: Date.now(), state }
  }
  return lastRead.state
}

function single<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make()
}

let metrics: WebhookMetrics | undefined

/** The webhook metrics, registered on the default registry on first use (once, even across reloads). */
export function webhookMetrics(): WebhookMetrics {
  metrics ??= {
    deliveryLatency: single('webhook_delivery_latency_seconds', () => new Histogram({
      name: 'webhook_delivery_latency_seconds',
      help: 'Seconds from the commit that queued a webhook delivery to the receiver\'s 2xx answer.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
    })),
    queueDepth: single('webhook_queue_depth', () => new Gauge({
      name: 'webhook_queue_depth',
      help: 'Webhook deliveries not yet done: pending (due or waiting for a retry) or being sent.',
      async collect() {
        this.set((await queueState()).depth)
      },
    })),
    oldestPendingAge: single('webhook_oldest_pending_age_seconds', () => new Gauge({
      name: 'webhook_oldest_pending_age_seconds',
      help: 'Age in seconds of the oldest webhook delivery not yet done (0 when none).',
      async collect() {
        this.set((await queueState()).oldestSeconds)
      },
    })),
  }
  return metrics
}

/** Where the queue gauges read from (the app's database); called once the database is open. */
export function watchWebhookQueue(db: Queryable) {
  holder.__webhookMetricsDb = db
  webhookMetrics()
}
