// Ready once the database is open and migrated, and answers now (503 while it cannot be reached).
export default defineEventHandler(async () => {
  const db = await useDb()
  await db.query('select 1')
  return { ok: true }
})
