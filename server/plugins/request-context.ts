// Every request is handled inside the logger's request scope (server/utils/log/), so that a line
// logged anywhere while it is handled carries its id (the Request-Id its answer gives). Plugins
// run in the order of their file names: this one comes after public-api-dispatch.ts, so it wraps
// the public API's short way as well as the general one. An error a handler throws is answered
// outside the handler (h3 calls the error handler, server/error.ts, from its listener), so that
// call is wrapped too. The console goes through the logger (in production, one JSON line per call).
import type { H3Event } from 'h3'

export default defineNitroPlugin((nitroApp) => {
  routeConsoleToLog()
  const app = nitroApp.h3App
  const idOf = (event: H3Event) => () => event.context.apiRequest?.id
  const handle = app.handler
  app.handler = defineEventHandler(event => runInRequest(idOf(event), () => handle(event)))
  const onError = app.options.onError
  if (onError) app.options.onError = (error, event) => runInRequest(idOf(event), () => onError(error, event))
})
