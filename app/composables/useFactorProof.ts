import type { FactorChoice } from '~/types/security'

/** The six digits of an authenticator app's code as typed ("123 456" too), or null when it is not one. */
export function codeDigits(code: string): string | null {
  const digits = code.replace(/\s/g, '')
  return /^\d{6}$/.test(digits) ? digits : null
}

/**
 * Proving who one is with a factor: a code of an authenticator app, or a passkey whose request
 * options come from `passkeyOptionsUrl`. `prove(body)` sends the proof (the sign-in's second step,
 * "Confirm it's you"); `pending` and `error` are the form's, as with useMutation.
 */
export function useFactorProof(options: {
  passkeyOptionsUrl: string
  passkeys: Ref<FactorChoice[]>
  prove: (body: Record<string, unknown>) => Promise<void>
}) {
  const { pending, error, run } = useMutation()
  const usingPasskey = ref(false)

  function proveCode(appId: string, code: string) {
    const digits = codeDigits(code)
    if (!digits) {
      error.value = 'Enter the 6-digit code from your authenticator app.'
      return
    }
    return run(() => options.prove({ factor_id: appId, code: digits }))
  }

  async function provePasskey() {
    usingPasskey.value = true
    try {
      await run(async () => {
        try {
          const response = await askForPasskey(options.passkeyOptionsUrl)
          const factor = options.passkeys.value.find(passkey => passkey.id === response.id) ?? options.passkeys.value[0]
          await options.prove({ factor_id: factor?.id, response })
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

  return { pending, error, run, usingPasskey, proveCode, provePasskey }
}

/** A proof under way, as useFactorProof answers it. */
export type FactorProof = ReturnType<typeof useFactorProof>
