// Stopping with live connections open. Asked to stop (SIGTERM or SIGINT), the server stops taking
// connections, waits until every open one has ended (up to NITRO_SHUTDOWN_TIMEOUT, 30 s by
// default) and only then runs its close hooks: the API log's last entries are written, the webhook
// worker hands back what it has not sent. A change stream or a realtime socket never ends by
// itself, so one open browser tab held every stop for the whole 30 s, past the grace period many
// orchestrators give before SIGKILL (which loses what the close hooks would have written). The
// long-lived connections therefore register here and are ended as soon as the signal arrives;
// their clients reconnect (to another instance, behind a load balancer) and resume where they were.

import { logger } from './log/logger'

const log = logger('shutdown')

type End = () => void

const enders = new Set<End>()
let isStopping = false

/**
 * Ends `end`'s connection when the process is asked to stop (at once if it already is). Answers
 * the function that forgets it, for when the connection ends first.
 */
export function endOnShutdown(end: End): () => void {
  if (isStopping) {
    queueMicrotask(end)
    return () => {}
  }
  enders.add(end)
  return () => enders.delete(end)
}

/** The signals the server stops on (Nitro's own setting, NITRO_SHUTDOWN_SIGNALS). */
function stopSignals(): NodeJS.Signals[] {
  return (process.env.NITRO_SHUTDOWN_SIGNALS || 'SIGTERM SIGINT').split(' ').map(signal => signal.trim()).filter(Boolean) as NodeJS.Signals[]
}

/** Ends every registered connection when a stop signal arrives (beside the server's own handling of it). */
export function endLiveConnectionsOnStop(): void {
  const stop = () => {
    if (isStopping) return
    isStopping = true
    for (const end of [...enders]) {
      try {
        end()
      }
      catch (error) {
        log.error('Could not end a live connection', { error })
      }
    }
    enders.clear()
  }
  for (const signal of stopSignals()) process.once(signal, stop)
}
