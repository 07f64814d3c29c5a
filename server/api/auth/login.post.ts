export default defineEventHandler(async (event) => {
  const { email, password } = await readValidBody(event, LoginBody)
  return signInWithPassword(event, email, password)
})
