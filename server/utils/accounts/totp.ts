import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import { renderSVG } from 'uqr'

/** RFC 6238 defaults: SHA-1, 6 digits, 30-second steps; secrets of 160 bits. */
const period = 30
const issuer = 'Team Workspace'

function appSecret(): string {
  // a generated session password reaches the server code through the environment (server/plugins/database.ts)
  const secret = setting('appSecret') || useRuntimeConfig().session.password || process.env.NUXT_SESSION_PASSWORD
  if (!secret) throw new Error('Neither APP_SECRET nor a session password is set')
  return secret
}

/** The AES-256-GCM key for TOTP secrets, derived from the app secret, and its id (which key sealed a secret). */
function sealingKey(): { key: Buffer, keyId: string } {
  const key = Buffer.from(hkdfSync('sha256', appSecret(), 'team-workspace', 'totp-secret', 32))
  return { key, keyId: createHash('sha256').update(key).digest('base64url').slice(0, 12) }
}

/** Seals a base32 secret; returns the sealed text and the id of the key that sealed it. */
export function sealTotpSecret(secret: string): { sealed: string, keyId: string } {
  const { key, keyId } = sealingKey()
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  return { sealed: [iv, sealed, cipher.getAuthTag()].map(part => part.toString('base64url')).join('.'), keyId }
}

/** The base32 secret, or null when it was sealed under another key (the factor cannot be used then). */
export function openTotpSecret(sealed: string, keyId: string): string | null {
  const { key, keyId: currentId } = sealingKey()
  if (keyId !== currentId) return null
  try {
    const [iv, text, tag] = sealed.split('.').map(part => Buffer.from(part, 'base64url'))
    const decipher = createDecipheriv('aes-256-gcm', key, iv!)
    decipher.setAuthTag(tag!)
    return Buffer.concat([decipher.update(text!), decipher.final()]).toString('utf8')
  }
  catch {
    return null
  }
}

function totpFor(secret: string, label: string): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period, secret: Secret.fromBase32(secret) })
}

/** A new authenticator-app secret (160 bits) with its otpauth:// URI and the URI as a QR code (SVG). */
export function newTotpSecret(label: string): { secret: string, uri: string, qrSvg: string } {
  const secret = new Secret({ size: 20 }).base32
  const uri = totpFor(secret, label).toString()
  return { secret, uri, qrSvg: renderSVG(uri) }
}

/**
 * The time step a code matches, one step either side of now, or null; the caller refuses a step
 * at or below the last one accepted (a code works once).
 */
export function matchingStep(secret: string, code: string): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const now = Date.now()
  const delta = totpFor(secret, 'check').validate({ token: code, timestamp: now, window: 1 })
  return delta === null ? null : Math.floor(now / 1000 / period) + delta
}
