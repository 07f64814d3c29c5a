import { createApp, eventHandler } from 'h3'
import { getRouteRulesForPath } from 'nitropack/runtime/internal/route-rules'
import { beginPublicApiRequest } from '~~/server/utils/api-log/recorder'

// The public API's requests (/api/v1/… and /rest/v1/…) take a short way to the app's router. The
// general stack runs, for every request, Nitro's request set-up and hooks, a static-file lookup,
// the route rules and the Origin check of the session routes. None of these apply to these paths
// (no route rule matches them, checked at start; they use bearer keys, not cookies). Leaving them
// out saved 0.06 to 0.1 ms of CPU per public API write, a quarter to a half of what the app added
// to a write over a bare handler (`npm run bench:api`). This way runs, in order: the
// request's id and API log entry (server/utils/api-log/), its measurement (/metrics), the body
// limit, the same router as every other request (so the same handler, 405 and 404 for a path),
// and the JSON compression. An error goes the way of
// any other request's (the app's error handler, then the response hooks). A hook added to Nitro's
// `request`, `beforeResponse` or `afterResponse` must be called here too to see these requests.

export default defineNitroPlugin((nitroApp) => {
  const app = nitroApp.h3App
  const ruled = ['/api/v1/x', '/api/v1/x/y', '/rest/v1/x', '/rest/v1/x/y'].some(path => Object.keys(getRouteRulesForPath(path)).length)
  if (useRuntimeConfig().app.baseURL !== '/' || ruled) return
  const isMeasured = isMeasuringRequests()
  const api = createApp({
    onRequest: (event) => {
      // what Nitro's error capture reads
      event.context.nitro ??= { errors: [] }
      beginPublicApiRequest(event)
      if (isMeasured) measureRequest(event)
    },
    onBeforeResponse: compressJsonAnswer,
  })
  api.use(eventHandler(limitRequestBody))
  api.use(nitroApp.router.handler)
  const everything = app.handler
  app.handler = eventHandler(event => isPublicApiPath(event.node.req.url ?? '/') ? api.handler(event) : everything(event))
})
