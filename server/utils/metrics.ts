import { createHash, timingSafeEqual } from 'node:crypto'
import { collectDefaultMetrics, Counter, Gauge, Histogram, register, type Metric } from 'prom-client'
import type { H3Event } from 'h3'
import type { PoolUse } from './db/db-drivers'
import { setting } from './settings'
import { useDb } from './db/database'

/**
 * The metric of that name on prom-client's default registry, made by `create` the first time
 * (registering one name twice throws, e.g. when a module is evaluated again in development).
 */
export function sharedMetric<T extends Metric>(name: string, create: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? create()
}

/** A counter without labels, registered the first time it is counted and kept for the hot path. */
export function defineCounter(name: string, help: string): () => Counter {
  let metric: Counter | undefined
  return () => (metric ??= sharedMetric(name, () => new Counter({ name, help })))
}

const httpRequests = () => sharedMetric('http_requests_total', () => new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
}))

const httpDuration = () => sharedMetric('http_request_duration_seconds', () => new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request\'s arrival to the end of its response, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
}))

/** Counts one answered request; `route` is the matched pattern (`/api/v1/:table`), never the raw path. */
export function observeRequest(method: string, route: string, status: number, seconds: number): void {
  const labels = { method, route, status: String(status) }
  httpRequests().inc(labels)
  httpDuration().observe(labels, seconds)
}

/** Whether requests are measured: only when GET /metrics is on (METRICS_TOKEN set). */
export function isMeasuringRequests(): boolean {
  return Boolean(setting('metricsToken'))
}

/**
 * Measures a request from now until its response is over ('close' also fires for an aborted or
 * streamed response), counted by its matched route pattern (the `/api/v1/:table`, not the raw
 * path, so that the label has a bounded set of values) and status.
 */
export function measureRequest(event: H3Event): void {
  const started = performance.now()
  event.node.res.once('close', () => {
    const route = event.context.matchedRoute?.path ?? 'unmatched'
    observeRequest(event.method, route, event.node.res.statusCode, (performance.now() - started) / 1000)
  })
}

let isSetUp = false

/** Registers the process metrics and the database pool gauges (read at each scrape); once per process. */
export function setUpMetrics(): void {
  if (isSetUp) return
  isSetUp = true
  if (!register.getSingleMetric('process_cpu_user_seconds_total')) collectDefaultMetrics()
  const poolGauge = (name: string, help: string, read: (use: PoolUse) => number) => sharedMetric(name, () => new Gauge({
    name,
    help,
    async collect() {
      const use = (await useDb().catch(() => undefined))?.poolUse?.()
      if (use) this.set(read(use))
    },
  }))
  poolGauge('db_pool_connections', 'Open connections of the request pool to DATABASE_URL', use => use.total)
  poolGauge('db_pool_idle_connections', 'Open connections of the request pool that no query is using', use => use.idle)
  poolGauge('db_pool_waiting_queries', 'Queries waiting for a connection of the request pool', use => use.waiting)
}

/** Whether an Authorization header carries `Bearer <token>`, compared in constant time. */
export function isMetricsTokenValid(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(authorization ?? '')?.[1] ?? ''
  // equal-length digests: the comparison takes the same time whatever was sent
  const digest = (value: string) => createHash('sha256').update(value).digest()
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0
}

/** The default registry in the Prometheus text format, and its content type. */
export async function metricsText(): Promise<{ text: string, contentType: string }> {
  return { text: await register.metrics(), contentType: register.contentType }
}
