// POST /auth/sign-in: the sign-in form posted by the browser itself: before the page's script has loaded, or without
// script. The same sign-in as POST /api/auth/login, answered with a redirect: on to the page asked
// for, or back to the form with what went wrong (and the e-mail address, so that it is not lost).
export default defineEventHandler(async (event) => {
  const redirect = safeRedirect(getQuery(event).redirect)
  const fields = await readFormFields(event)
  const result = await signInFromForm(event, fields)
  // an account with a second factor goes on to the form's second step
  if (result.ok) return sendRedirect(event, result.mfaRequired ? `/login?${new URLSearchParams({ redirect, step: 'mfa' })}` : redirect, 303)
  const back = new URLSearchParams({ redirect, email: String(fields.email ?? '').slice(0, 254), error: result.message })
  return sendRedirect(event, `/login?${back}`, 303)
})
