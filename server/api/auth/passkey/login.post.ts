import { PasskeyLoginBody } from '#shared/utils/security'
import { signInWithPasskey } from '~~/server/utils/accounts/sign-in'

export default defineEventHandler(async (event) => {
  const { response } = await readValidBody(event, PasskeyLoginBody)
  return signInWithPasskey(event, await useDb(), response)
})
