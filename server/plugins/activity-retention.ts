// Deletes activity entries past their team's retention, at start and then periodically. Every app
// instance runs it; an advisory lock lets one purge at a time (server/utils/activity/activity-log.ts).
export default defineNitroPlugin((nitroApp) => {
  const interval = Number(setting('activityPurgeIntervalMs')) || 30_000
  let timer: ReturnType<typeof setTimeout> | undefined
  let isClosed = false
  let wasLocked = false
  const run = async () => {
    try {
      const result = await purgeExpiredActivity(await useDb())
      // said once per stretch, not every interval
      if (result === 'locked' && !wasLocked) console.info('[activity] Another instance is purging expired activity; this one waits')
      if (typeof result === 'number' && result) console.info(`[activity] Purged ${result} entries past their team's retention`)
      wasLocked = result === 'locked'
    }
    catch (error) {
      console.error('[activity] The retention purge failed:', (error as Error).message)
    }
    if (!isClosed) timer = setTimeout(run, interval)
  }
  run()
  nitroApp.hooks.hook('close', () => {
    isClosed = true
    clearTimeout(timer)
  })
})
