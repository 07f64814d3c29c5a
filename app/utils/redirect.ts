/** Where to go after signing in: the `redirect` query when it is a path of this site, else /app. */
export function safeRedirect(redirect: unknown): string {
  if (typeof redirect === 'string' && redirect.startsWith('/') && !redirect.startsWith('//')) return redirect
  return '/app'
}
