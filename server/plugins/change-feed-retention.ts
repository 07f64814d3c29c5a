import { purgeExpiredEvents } from '~~/server/utils/changes/feed'

// Deletes change-feed events past their team's activity retention, at start and then
// periodically (events are kept as long as the team's activity entries). Every instance schedules
// it; its advisory lock lets one purge at a time (server/utils/jobs/).
const log = logger('changes')

export default defineNitroPlugin((nitroApp) => {
  const job = schedule({
    name: 'change-feed-retention',
    everyMs: Number(setting('activityPurgeIntervalMs')) || 30_000,
    lockKey: 'record_events_retention',
    run: async () => {
      const purged = await purgeExpiredEvents(await useDb())
      if (purged) log.info(`Purged ${purged} events past their team's retention`, { purged })
    },
  })
  nitroApp.hooks.hook('close', () => job.stop())
})
