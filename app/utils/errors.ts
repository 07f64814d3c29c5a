/** The server's message from a failed $fetch (`{ error }` in the body), or a fallback. */
export function errorMessage(error: unknown, fallback = 'Something went wrong. Please try again.'): string {
  if (error && typeof error === 'object') {
    const data = (error as { data?: { error?: unknown } }).data
    if (data && typeof data.error === 'string') return data.error
  }
  return fallback
}

/** The HTTP status of a failed $fetch, when there is one. */
export function errorStatus(error: unknown): number | undefined {
  if (error && typeof error === 'object') return (error as { statusCode?: number }).statusCode
  return undefined
}

/** The `code` of a failed $fetch's body (`reauth_required`, `invalid_code`...), when there is one. */
export function errorCode(error: unknown): string | undefined {
  if (error && typeof error === 'object') {
    const data = (error as { data?: { code?: unknown } }).data
    if (data && typeof data.code === 'string') return data.code
  }
  return undefined
}
