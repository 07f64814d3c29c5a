export default defineEventHandler(async (event) => {
  const { email, password } = await readValidBody(event, LoginBody)
  const db = await useDb()
  const retryAfter = await loginRetryAfter(db, email)
  if (retryAfter) {
    setResponseHeader(event, 'retry-after', retryAfter)
    throw createError({ statusCode: 429, statusMessage: `Too many failed sign-ins; try again in ${Math.ceil(retryAfter / 60)} minute(s)` })
  }
  const user = await verifyCredentials(db, email, password)
  if (!user) throw createError({ statusCode: 401, statusMessage: 'Wrong e-mail or password' })
  const teams = await listUserTeams(db, user.id)
  await replaceUserSession(event, { user, currentTeamId: teams[0]?.id ?? null })
  return { user }
})
