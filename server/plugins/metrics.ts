// With METRICS_TOKEN set, every answered request is counted for GET /metrics (server/utils/metrics.ts).
// Unset, nothing is measured.
export default defineNitroPlugin((nitroApp) => {
  if (!isMeasuringRequests()) return
  setUpMetrics()
  nitroApp.hooks.hook('request', measureRequest)
})
