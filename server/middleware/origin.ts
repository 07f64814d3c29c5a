// A state-changing request on a session route whose Origin names another site is refused:
// the session cookie must not be usable from elsewhere. /api/v1 uses bearer keys.
const stateChanging = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export default defineEventHandler((event) => {
  if (!stateChanging.has(event.method) || !event.path.startsWith('/api/') || event.path.startsWith('/api/v1/')) return
  const origin = requestHeader(event, 'origin')
  if (!origin) return
  let originHost: string
  try {
    originHost = new URL(origin).host
  }
  catch {
    originHost = ''
  }
  if (originHost !== getRequestHost(event, { xForwardedHost: false })) {
    throw createError({ statusCode: 403, statusMessage: 'Cross-site request refused' })
  }
})
