// Delivers queued webhooks (the outbox in webhook_deliveries) in the background, and runs the
// endpoint auto-disable job at start and then periodically. Every app instance runs both; they share
// deliveries through FOR UPDATE SKIP LOCKED and the job through an advisory lock.
export default defineNitroPlugin((nitroApp) => {
  const settings = webhookSettings()
  const started = useDb().then(db => startWebhookWorker(db, settings))
  const runJob = () => useDb()
    .then(disableFailingEndpoints)
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
