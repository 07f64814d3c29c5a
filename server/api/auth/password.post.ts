export default defineEventHandler(async (event) => {
  const user = await requireUser(event)
  const { current_password, new_password } = await readValidBody(event, ChangePasswordBody)
  const { sessionId } = await getUserSession(event)
  const { endedSessions } = await changePassword(await useDb(), user, sessionId!, current_password, new_password)
  return { ended_sessions: endedSessions }
})
