import { setChallengeCookie } from '~~/server/utils/accounts/challenges'
import { authenticationOptions } from '~~/server/utils/accounts/passkeys'

// Options for a passwordless sign-in (any discoverable passkey); the challenge is bound to a short-lived cookie.
export default defineEventHandler(async (event) => {
  return authenticationOptions(event, await useDb(), 'sign_in', setChallengeCookie(event), null)
})
