// JSON answers of the API routes and server-rendered pages are compressed when the client accepts it (server/utils/http/compression.ts).
export default defineNitroPlugin((nitroApp) => {
  nitroApp.hooks.hook('beforeResponse', compressJsonAnswer)
  nitroApp.hooks.hook('beforeResponse', compressPageAnswer)
})
