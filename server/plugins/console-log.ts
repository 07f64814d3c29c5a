// In production the console's own calls (the server's "Listening on", a library's warning) go
// through the app's logger (server/utils/log/), so that every line the app prints is JSON.
export default defineNitroPlugin(() => {
  routeConsoleToLog()
})
