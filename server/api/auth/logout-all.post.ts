export default defineEventHandler(async (event) => {
  const user = await requireUser(event)
  const ended = await endUserSessions(await useDb(), user.id)
  await clearUserSession(event)
  return { ended_sessions: ended }
})
