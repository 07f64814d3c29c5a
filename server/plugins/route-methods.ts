import { lazyEventHandler, type EventHandler, type LazyEventHandler } from 'h3'
import { handlers } from '#nitro-internal-virtual/server-handlers'

// The same request always reaches the same handler. h3's router (v1) answers a method a route
// does not have by searching the other routes that match the path, and stores what it finds on
// the route: after one HEAD /api/v1/tasks, every later PATCH or DELETE there went to the page
// renderer, and a PATCH /api/v1/tasks could reach the handler of /api/v1/:table/:id. Giving each
// route a handler for any other method means that search never runs: HEAD is answered as GET
// (without the body), anything else is a 405 naming the methods the route has.
export default defineNitroPlugin((nitroApp) => {
  const routes = new Map<string, Map<string, EventHandler>>()
  for (const entry of handlers) {
    if (entry.middleware || !entry.route || !entry.method) continue
    const handler = entry.lazy ? lazyEventHandler(entry.handler as LazyEventHandler) : entry.handler as EventHandler
    const methods = routes.get(entry.route) ?? new Map<string, EventHandler>()
    methods.set(entry.method.toUpperCase(), handler)
    routes.set(entry.route, methods)
  }
  // a route that takes any method (the page renderer) has nothing to add
  for (const entry of handlers) if (!entry.middleware && entry.route && !entry.method) routes.delete(entry.route)
  for (const [route, methods] of routes) {
    const allowed = [...new Set([...methods.keys(), ...(methods.has('GET') ? ['HEAD'] : [])])].sort().join(', ')
    nitroApp.router.use(route, defineEventHandler((event) => {
      const get = methods.get('GET')
      if (event.method === 'HEAD' && get) return get(event)
      setResponseHeader(event, 'allow', allowed)
      throw createError({ statusCode: 405, statusMessage: `Method ${event.method} is not allowed here; this path takes ${allowed}` })
    }))
  }
})
