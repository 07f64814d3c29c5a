/** Calls `check` until it returns a value other than undefined/false, or throws after `timeoutMs` naming `what`. */
export async function pollUntil<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    last = await check()
    if (last !== undefined && last !== false) return last as T
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
}
