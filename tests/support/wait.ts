type Probe<T> = () => Promise<T | undefined | null | false> | T | undefined | null | false

/** Polls `probe` until it answers a truthy value and returns it; fails after `timeoutMs` naming what it waited for. */
export async function waitFor<T>(what: string, probe: Probe<T>, { timeoutMs = 15_000, intervalMs = 50 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, intervalMs))
  }
}
