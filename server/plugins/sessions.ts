// The session routes of nuxt-auth-utils follow the server-side sessions too: reading an ended
// session answers 401, and clearing a session (sign-out) deletes its row.
export default defineNitroPlugin(() => {
  sessionHooks.hook('fetch', async (session) => {
    if (!await isSessionLive(await useDb(), session)) throw createError({ statusCode: 401, statusMessage: 'This session has ended; sign in again' })
  })
  sessionHooks.hook('clear', async (session) => {
    if (session.sessionId) await (await useDb()).query('delete from public.user_sessions where id = $1', [session.sessionId])
  })
})
