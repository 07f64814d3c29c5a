/**
 * Where to go after signing in: the `redirect` query when it is a path of this site, else /app
 * (never `//host` or `/\host`, which browsers read as another site).
 */
export function safeRedirect(redirect: unknown): string {
  if (typeof redirect === 'string' && /^\/(?![/\\])/.test(redirect)) return redirect
  return '/app'
}
