// GET /metrics: Prometheus text of this process (prom-client's default registry). Off (404)
// unless METRICS_TOKEN is set; then only for `Authorization: Bearer <METRICS_TOKEN>`.
export default defineEventHandler(async (event) => {
  const token = setting('metricsToken')
  if (!token) throw createError({ statusCode: 404, statusMessage: 'Not Found' })
  if (!isMetricsTokenValid(requestHeader(event, 'authorization'), token)) {
    setResponseHeader(event, 'www-authenticate', 'Bearer')
    throw createError({ statusCode: 401, statusMessage: 'A valid metrics token is required (Authorization: Bearer <METRICS_TOKEN>)' })
  }
  const { text, contentType } = await metricsText()
  setResponseHeader(event, 'content-type', contentType)
  setResponseHeader(event, 'cache-control', 'no-store')
  return text
})
