import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'

// A software passkey for HTTP-level tests: an ES256 key made with node:crypto, and the bytes an
// authenticator would send (authenticator data, a "none" attestation in CBOR, ECDSA signatures).
// The browser tests use Chromium's own virtual authenticator instead.

/** The few CBOR shapes an attestation object and a COSE key need (RFC 8949): integers, byte and text strings, maps. */
type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length])
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length])
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff])
  const bytes = Buffer.alloc(5)
  bytes[0] = (major << 5) | 26
  bytes.writeUInt32BE(length, 1)
  return bytes
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8')
    return Buffer.concat([head(3, text.length), text])
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value])
  const parts: Buffer[] = [head(5, value.size)]
  for (const [key, item] of value) parts.push(cbor(key), cbor(item))
  return Buffer.concat(parts)
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')

export interface AssertionOptions {
  /** Overrides: the origin in the client data, the RP ID whose hash the authenticator data carries, the flags, the counter. */
  origin?: string
  rpId?: string
  userVerified?: boolean
  counter?: number
  challenge?: string
}

export class SoftwarePasskey {
  readonly credentialId = randomBytes(32)
  private readonly privateKey: KeyObject
  private readonly publicKey: KeyObject
  counter = 0

  constructor(readonly origin: string, readonly rpId = new URL(origin).hostname) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    this.privateKey = pair.privateKey
    this.publicKey = createPublicKey(pair.privateKey)
  }

  get id(): string {
    return b64url(this.credentialId)
  }

  private authenticatorData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4)
    count.writeUInt32BE(counter)
    return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), count, ...(attested ? [attested] : [])])
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }))
  }

  /** The response of navigator.credentials.create() to these creation options. */
  register(options: { challenge: string }, overrides: AssertionOptions = {}) {
    const jwk = this.publicKey.export({ format: 'jwk' })
    const coseKey = cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]))
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(this.credentialId.length)
    const attested = Buffer.concat([Buffer.alloc(16), idLength, this.credentialId, coseKey])
    // user present (0x01), user verified (0x04), attested credential data (0x40)
    const flags = 0x01 | 0x40 | (overrides.userVerified === false ? 0 : 0x04)
    const authData = this.authenticatorData(overrides.rpId ?? this.rpId, flags, this.counter, attested)
    const attestationObject = cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]))
    return {
      id: this.id, rawId: this.id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', overrides.challenge ?? options.challenge, overrides.origin ?? this.origin)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
    }
  }

  /** The response of navigator.credentials.get() to these request options; the counter moves on by one. */
  assert(options: { challenge: string }, userHandle: string | null, overrides: AssertionOptions = {}) {
    this.counter += 1
    const flags = 0x01 | (overrides.userVerified === false ? 0 : 0x04)
    const authData = this.authenticatorData(overrides.rpId ?? this.rpId, flags, overrides.counter ?? this.counter)
    const clientData = this.clientData('webauthn.get', overrides.challenge ?? options.challenge, overrides.origin ?? this.origin)
    const signature = sign('sha256', Buffer.concat([authData, createHash('sha256').update(clientData).digest()]), this.privateKey)
    return {
      id: this.id, rawId: this.id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: userHandle ? b64url(Buffer.from(userHandle)) : undefined,
      },
    }
  }
}
