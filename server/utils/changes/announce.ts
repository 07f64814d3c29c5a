// The announcement of committed writes whose transactions did not notify inside them
// (`app.notify_after_commit`): one `record_events` notification for all the writes of a few
// milliseconds, sent in a transaction of its own that writes nothing. No Nitro imports: the
// benchmark's bare handler announces its writes with it too.

/** The notification that wakes every instance's change hub. */
export const announceEventsSql = `select pg_notify('record_events', '')`

/** How long an announcement waits for more committed writes. */
export const announceWithinMs = 5

/** A function to call after each committed write: it calls `send` once for all the calls of `announceWithinMs`. */
export function announcer(send: () => Promise<unknown>): () => void {
  let isPending = false
  return () => {
    if (isPending) return
    isPending = true
    setTimeout(() => {
      isPending = false
      void send()
    }, announceWithinMs)
  }
}
