// Delivers queued webhooks (the outbox in webhook_deliveries) in the background, and runs the
// endpoint auto-disable job (endpoints failing for days, and those of keys that expired; and lapsed receiver holds) at start and then periodically. Every app instance runs both; they share
// deliveries through FOR UPDATE SKIP LOCKED and the job through an advisory lock. The worker is woken
// by the `webhook_queued` notification that a queuing commit sends, and polls as a fallback; when the
// listening connection comes back after a loss it looks at once (notifications sent meanwhile are lost).
export default defineNitroPlugin((nitroApp) => {
  const settings = webhookSettings()
  const started = useDb().then((db) => {
    watchWebhookQueue(db)
    const worker = startWebhookWorker(db, settings)
    onReconnect(() => worker.wake())
    listen('webhook_queued', () => worker.wake())
      .catch(error => console.error('[webhooks] could not listen for queued deliveries:', (error as Error).message))
    return worker
  })
  const runJob = () => useDb()
    .then(db => Promise.all([disableFailingEndpoints(db), disableEndpointsOfExpiredKeys(db), forgetLapsedHolds(db)]))
    .catch(error => console.error('[webhooks] the auto-disable job failed:', (error as Error).message))
  void runJob()
  const timer = setInterval(runJob, settings.maintenanceIntervalMs)
  timer.unref()
  nitroApp.hooks.hook('close', async () => {
    clearInterval(timer)
    const worker = await started.catch(() => null)
    await worker?.stop()
  })
})
