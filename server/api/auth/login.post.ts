export default defineEventHandler(async (event) => {
  const { email, password } = await readValidBody(event, LoginBody)
  const result = await signIn(await useDb(), email, password)
  if ('retryAfter' in result) {
    setResponseHeader(event, 'retry-after', result.retryAfter)
    throw createError({ statusCode: 429, statusMessage: `Too many failed sign-ins; try again in ${Math.ceil(result.retryAfter / 60)} minute(s)` })
  }
  await startSession(event, result.user, result.currentTeamId)
  return { user: result.user }
})
