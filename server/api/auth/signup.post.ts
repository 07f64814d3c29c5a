export default defineEventHandler(async (event) => {
  const body = await readValidBody(event, SignupBody)
  const user = await createAccount(await useDb(), body)
  if (!user) throw createError({ statusCode: 409, statusMessage: 'An account with this e-mail already exists' })
  await startSession(event, user, null)
  setResponseStatus(event, 201)
  return { user }
})
