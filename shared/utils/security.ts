import { z } from 'zod'

/** A factor's name: 1 to 100 characters. */
export const factorName = z.string().trim().min(1, 'is required').max(100, 'must be at most 100 characters')

/** A six-digit code of an authenticator app. */
export const totpCode = z.string({ error: 'must be the six digits of your authenticator app' }).trim().max(16, 'must be the six digits of your authenticator app')

/** A WebAuthn response as the browser library produces it (checked in full by the server's WebAuthn library). */
export const webauthnResponse = z.object({
  id: z.string().min(1).max(1024),
  rawId: z.string().max(1024),
  type: z.literal('public-key'),
  response: z.record(z.string(), z.unknown()),
}).loose()

export const NewTotpBody = z.object({ name: factorName.optional() })
export const VerifyTotpBody = z.object({ code: totpCode })
export const NewPasskeyBody = z.object({ response: webauthnResponse, name: factorName.optional() })
export const RenameFactorBody = z.object({ name: factorName })
export const PasskeyLoginBody = z.object({ response: webauthnResponse })

/** The second step of a sign-in, or a re-authentication with a factor: a code, a recovery code or a passkey response. */
export const SecondFactorBody = z.union([
  z.object({ factor_id: z.uuid({ error: 'must be the id of one of your factors' }), code: totpCode }),
  z.object({ factor_id: z.uuid({ error: 'must be the id of one of your factors' }), response: webauthnResponse }),
  z.object({ recovery_code: z.string().trim().min(1, 'is required').max(64, 'is not a recovery code') }),
], { error: 'send { factor_id, code }, { factor_id, response } or { recovery_code }' })

export const ReauthBody = z.union([
  z.object({ password: z.string().min(1, 'is required').max(128) }),
  z.object({ factor_id: z.uuid({ error: 'must be the id of one of your factors' }), code: totpCode }),
  z.object({ factor_id: z.uuid({ error: 'must be the id of one of your factors' }), response: webauthnResponse }),
], { error: 'send { password }, { factor_id, code } or { factor_id, response }' })

export const SecurityLogQuery = z.object({
  limit: z.coerce.number().int('must be a whole number').min(1, 'must be at least 1').max(200, 'must be at most 200').default(50),
  cursor: z.string().regex(/^\d{1,18}$/, 'must be the next_cursor of a previous page').optional(),
})
