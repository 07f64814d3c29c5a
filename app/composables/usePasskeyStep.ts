import type { AuthenticationResponseJSON } from '@simplewebauthn/browser'
import type { Ref } from 'vue'

/**
 * A second step's "Use a passkey" (the sign-in's, a re-authentication's): `withPasskey` asks for
 * a passkey with the options from `optionsUrl` and hands the answer, with the factor it names
 * (else the first passkey), to `send`, through the form's `run` (its pending state and error);
 * `usingPasskey` is true meanwhile. A browser's failure becomes a form error in plain words; the
 * server's answers pass as they are.
 */
export function usePasskeyStep(
  optionsUrl: string,
  passkeys: Ref<{ id: string }[]>,
  send: (body: { factor_id?: string, response: AuthenticationResponseJSON }) => Promise<void>,
  run: (action: () => Promise<void>) => Promise<boolean>,
) {
  const usingPasskey = ref(false)
  async function withPasskey() {
    usingPasskey.value = true
    try {
      await run(async () => {
        try {
          const response = await askForPasskey(optionsUrl)
          const factor = passkeys.value.find(passkey => passkey.id === response.id) ?? passkeys.value[0]
          await send({ factor_id: factor?.id, response })
        }
        catch (failure) {
          if (errorStatus(failure)) throw failure
          throw { data: { error: passkeyErrorMessage(failure) } }
        }
      })
    }
    finally {
      usingPasskey.value = false
    }
  }
  return { usingPasskey, withPasskey }
}
