// With METRICS_TOKEN set, every answered request is counted for GET /metrics by its route pattern
// (the matched `/api/v1/:table`, not the raw path, so that the label has a bounded set of values)
// and status, with its duration. Unset, nothing is measured.
export default defineNitroPlugin((nitroApp) => {
  if (!setting('metricsToken')) return
  setUpMetrics()
  nitroApp.hooks.hook('request', (event) => {
    const started = performance.now()
    // 'close' also fires for an aborted or streamed response, once it is over
    event.node.res.once('close', () => {
      const route = event.context.matchedRoute?.path ?? 'unmatched'
      observeRequest(event.method, route, event.node.res.statusCode, (performance.now() - started) / 1000)
    })
  })
})
