// Ends the change streams and realtime sockets when the process is asked to stop, so that the
// server's wait for open connections ends at once and its close hooks run (server/utils/shutdown.ts).
export default defineNitroPlugin(() => {
  if (import.meta.dev) return
  endLiveConnectionsOnStop()
})
