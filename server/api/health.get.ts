// Ready once the database is open and migrated.
export default defineEventHandler(async () => {
  await useDb()
  return { ok: true }
})
