import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/browser'

// The browser's side of passkeys: the options come from the server, the browser's authenticator
// answers, and the answer goes back to the server. @simplewebauthn/browser loads only when a
// passkey is used (or the sign-in page offers its autofill).

/** Creates a passkey with the creation options from `optionsUrl` (POST). */
export async function createPasskey(optionsUrl: string): Promise<RegistrationResponseJSON> {
  const { startRegistration } = await import('@simplewebauthn/browser')
  const optionsJSON = await $fetch<PublicKeyCredentialCreationOptionsJSON>(optionsUrl, { method: 'POST' })
  return startRegistration({ optionsJSON })
}

/**
 * Asks for a passkey with the request options from `optionsUrl` (POST). With `autofill`, the
 * browser offers the account's passkeys in the e-mail field's suggestions (conditional
 * mediation) and the promise waits until one is picked; a later request cancels it.
 */
export async function askForPasskey(optionsUrl: string, { autofill = false } = {}): Promise<AuthenticationResponseJSON> {
  const { startAuthentication } = await import('@simplewebauthn/browser')
  const optionsJSON = await $fetch<PublicKeyCredentialRequestOptionsJSON>(optionsUrl, { method: 'POST' })
  return startAuthentication({ optionsJSON, useBrowserAutofill: autofill })
}

/** Whether the browser can offer passkeys in a field's autofill suggestions. */
export async function passkeyAutofillAvailable(): Promise<boolean> {
  const { browserSupportsWebAuthnAutofill } = await import('@simplewebauthn/browser')
  return browserSupportsWebAuthnAutofill()
}

/** Whether an error is the browser's passkey prompt cancelled (by the person, a timeout or a newer request). */
export function isPasskeyCancelled(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name
  return name === 'NotAllowedError' || name === 'AbortError'
    || (error as { code?: string } | null)?.code === 'ERROR_CEREMONY_ABORTED'
}

/** What to say when a passkey could not be used: the server's message, or the browser's reason in plain words. */
export function passkeyErrorMessage(error: unknown): string {
  if (errorStatus(error)) return errorMessage(error)
  if (isPasskeyCancelled(error)) return 'The passkey was not used: the request was cancelled or timed out.'
  const name = (error as { name?: string } | null)?.name
  if (name === 'InvalidStateError') return 'This passkey is registered already.'
  if (name === 'SecurityError') return 'This browser refused the passkey for this address.'
  if (name === 'NotSupportedError') return 'This browser or device cannot use passkeys.'
  return (error as { message?: string } | null)?.message || 'The passkey could not be used.'
}
