// Delivers queued webhooks (the outbox in webhook_deliveries) in the background. Every app instance
// runs one; they share the work through FOR UPDATE SKIP LOCKED (server/utils/webhooks.ts).
export default defineNitroPlugin((nitroApp) => {
  const settings = webhookSettings()
  const started = useDb().then(db => startWebhookWorker(db, settings))
  nitroApp.hooks.hook('close', async () => {
    const worker = await started.catch(() => null)
    await worker?.stop()
  })
})
