import { purgeExpiredEvents } from '~~/server/utils/changes/feed'

// Deletes change-feed events past their team's activity retention, at start and then
// periodically (events are kept as long as the team's activity entries). Every instance runs it;
// an advisory lock lets one purge at a time.
export default defineNitroPlugin((nitroApp) => {
  const interval = Number(setting('activityPurgeIntervalMs')) || 30_000
  const run = () => useDb()
    .then(purgeExpiredEvents)
    .then(count => count && console.info(`[changes] Purged ${count} events past their team's retention`))
    .catch(error => console.error('[changes] The retention purge failed:', (error as Error).message))
  void run()
  const timer = setInterval(run, interval)
  timer.unref()
  nitroApp.hooks.hook('close', () => clearInterval(timer))
})
