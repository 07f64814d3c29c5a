// The notification listener (server/utils/db/notifications.ts) starts on its first listen; this
// closes its connection when the server closes.
export default defineNitroPlugin((nitroApp) => {
  nitroApp.hooks.hook('close', () => stopNotifications())
})
