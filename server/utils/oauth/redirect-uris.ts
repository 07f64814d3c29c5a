const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Why a redirect URI may not be registered, or null when it may: https; http only on a loopback
 * host (any port); or a private-use scheme of a native app (`cursor://…`, `com.example.app:/cb`).
 * Never a fragment, never javascript:, data:, file: and the like.
 */
export function redirectUriProblem(value: string): string | null {
  let url: URL
  try {
    url = new URL(value)
  }
  catch {
    return `${value.slice(0, 100)} is not a URL`
  }
  if (url.hash) return 'a redirect URI must not have a fragment'
  const scheme = url.protocol.slice(0, -1).toLowerCase()
  if (scheme === 'https') return null
  if (scheme === 'http') return loopbackHosts.has(url.hostname) ? null : 'an http redirect URI must be on a loopback host (localhost, 127.0.0.1 or [::1]); use https otherwise'
  if (['javascript', 'data', 'file', 'blob', 'about', 'vbscript', 'ftp', 'ws', 'wss'].includes(scheme)) return `the ${scheme}: scheme is not allowed for redirect URIs`
  // a private-use scheme: a name with a letter and (by RFC 8252) usually a dot or at least a few characters
  if (!/^[a-z][a-z0-9+.-]{2,}$/.test(scheme)) return `${scheme}: is not a private-use scheme`
  return null
}

/** Whether a requested redirect URI is one the client registered: an exact string match. */
export function redirectUriRegistered(requested: string, registered: readonly string[]): boolean {
  return registered.includes(requested)
}

/** The host shown on the consent page for a redirect URI (the scheme for a private-use one). */
export function redirectHost(value: string): string {
  const url = new URL(value)
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.host
  return url.host ? `${url.protocol}//${url.host}` : url.protocol
}
