import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateApiKey, hashApiKey } from '../../server/utils/credentials/api-keys'
import { apiKeyStatus, CreateApiKeyBody, displayedKeyPrefix } from '#shared/utils/api-keys'

describe('generateApiKey', () => {
  it('makes a 43-character base64url key from 32 random bytes', () => {
    const { key } = generateApiKey()
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(key, 'base64url')).toHaveLength(32)
  })

  it('takes the first 8 characters as the prefix', () => {
    const { key, prefix } = generateApiKey()
    expect(prefix).toBe(key.slice(0, 8))
    expect(prefix).toHaveLength(8)
  })

  it('hashes the full raw key with SHA-256 as lowercase hex', () => {
    const { key, hash } = generateApiKey()
    expect(hash).toBe(createHash('sha256').update(key).digest('hex'))
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(hashApiKey(key)).toBe(hash)
  })

  it('never makes the same key twice', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey().key))
    expect(keys.size).toBe(1000)
  })
})

describe('apiKeyStatus', () => {
  const now = Date.parse('2026-06-01T12:00:00Z')
  it.each([
    [{ revoked_at: null, expires_at: null }, 'active'],
    [{ revoked_at: null, expires_at: '2026-06-02T00:00:00Z' }, 'active'],
    [{ revoked_at: null, expires_at: '2026-05-31T00:00:00Z' }, 'expired'],
    [{ revoked_at: '2026-05-01T00:00:00Z', expires_at: '2026-05-31T00:00:00Z' }, 'revoked'],
    [{ revoked_at: '2026-05-01T00:00:00Z', expires_at: null }, 'revoked'],
  ] as const)('%j is %s', (key, status) => {
    expect(apiKeyStatus(key, now)).toBe(status)
  })

  it('names a key as sk_... and its first 8 characters, as the seed fixes it', () => {
    expect(displayedKeyPrefix('abcd1234')).toBe('sk_...abcd1234')
  })
})

describe('CreateApiKeyBody', () => {
  it('trims the name and accepts a future expiry', () => {
    const future = new Date(Date.now() + 86_400_000).toISOString()
    expect(CreateApiKeyBody.parse({ name: '  Zapier  ', expires_at: future })).toEqual({ name: 'Zapier', expires_at: future })
  })

  it.each([
    [{ name: '   ' }, 'name'],
    [{ name: 'n'.repeat(101) }, 'name'],
    [{ name: 'ok', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
    [{ name: 'ok', expires_at: 'tomorrow' }, 'expires_at'],
  ])('refuses %j', (body, field) => {
    const result = CreateApiKeyBody.safeParse(body)
    expect(result.success).toBe(false)
    expect(result.error!.issues[0]!.path).toEqual([field])
  })
})
