// Delivers queued webhooks (the outbox in webhook_deliveries) in the background, and runs the
// endpoint auto-disable job (endpoints failing for days, and those of keys that expired; and lapsed
// receiver holds) at start and then periodically (server/utils/jobs/). Every app instance runs
// both; they share deliveries through FOR UPDATE SKIP LOCKED and the job through advisory locks. The worker is woken
// by the `webhook_queued` notification that a queuing commit sends, and polls as a fallback; when the
// listening connection comes back after a loss it looks at once (notifications sent meanwhile are lost).
const log = logger('webhooks')

export default defineNitroPlugin((nitroApp) => {
  const settings = webhookSettings()
  const started = useDb().then((db) => {
    watchWebhookQueue(db)
    const worker = startWebhookWorker(db, settings)
    onReconnect(() => worker.wake())
    listen('webhook_queued', () => worker.wake())
      .catch(error => log.error('Could not listen for queued deliveries', { error }))
    return worker
  })
  // each of the three takes its own advisory lock, in its own transaction
  const job = schedule({
    name: 'webhooks-auto-disable',
    everyMs: settings.maintenanceIntervalMs,
    run: async () => {
      const db = await useDb()
      await Promise.all([disableFailingEndpoints(db), disableEndpointsOfExpiredKeys(db), forgetLapsedHolds(db)])
    },
  })
  nitroApp.hooks.hook('close', async () => {
    await job.stop()
    const worker = await started.catch(() => null)
    await worker?.stop()
  })
})
