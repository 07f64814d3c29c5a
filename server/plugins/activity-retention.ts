// Deletes activity entries past their team's retention, at start and then periodically
// (ACTIVITY_PURGE_INTERVAL_MS, default 30 s). Every app instance schedules it; its advisory lock
// lets one purge at a time (server/utils/jobs/).
const log = logger('activity')

export default defineNitroPlugin((nitroApp) => {
  const job = schedule({
    name: 'activity-retention',
    everyMs: Number(setting('activityPurgeIntervalMs')) || 30_000,
    lockKey: 'activity_retention',
    run: async () => {
      const purged = await purgeExpiredActivity(await useDb())
      if (purged) log.info(`Purged ${purged} entries past their team's retention`, { purged })
    },
  })
  nitroApp.hooks.hook('close', () => job.stop())
})
