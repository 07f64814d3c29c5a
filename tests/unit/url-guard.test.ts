import { describe, expect, it } from 'vitest'
import { guardedLookup, isPrivateAddress, isPrivateLiteral, privateNetworksAllowed, webhookUrlProblem } from '../../server/utils/http/url-guard'

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1', '127.1.2.3', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
    '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', 'fc00::1',
    '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:a00:1', 'not-an-ip',
  ])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true)
  })

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '192.169.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false)
  })
})

describe('webhookUrlProblem', () => {
  it.each([
    'http://127.0.0.1:8080/hook', 'http://10.0.0.1/hook', 'https://[::1]/hook', 'http://localhost:3000/x',
    'http://api.localhost/x', 'http://169.254.169.254/latest/meta-data', 'http://[::ffff:127.0.0.1]/x', 'http://0x7f.1/x',
  ])('refuses %s', async (url) => {
    expect(await webhookUrlProblem(url, false)).toMatch(/private/)
  })

  it('allows them all when private networks are allowed', async () => {
    expect(await webhookUrlProblem('http://127.0.0.1:8080/hook', true)).toBeNull()
    expect(await webhookUrlProblem('http://localhost/hook', true)).toBeNull()
  })

  it('allows a public address and a name that does not resolve here', async () => {
    expect(await webhookUrlProblem('https://93.184.216.34/hook', false)).toBeNull()
    expect(await webhookUrlProblem('https://hooks.example.invalid/in', false)).toBeNull()
  })

  it('refuses what is not http or https', async () => {
    expect(await webhookUrlProblem('ftp://example.com/x', false)).toMatch(/http/)
    expect(await webhookUrlProblem('nonsense', false)).toMatch(/http/)
  })
})

describe('connect-time guard', () => {
  it('refuses IP literals and local names before connecting', () => {
    expect(isPrivateLiteral(new URL('http://127.0.0.1/x'), false)).toBe(true)
    expect(isPrivateLiteral(new URL('http://[fd00::1]/x'), false)).toBe(true)
    expect(isPrivateLiteral(new URL('http://127.0.0.1/x'), true)).toBe(false)
    expect(isPrivateLiteral(new URL('http://93.184.216.34/x'), false)).toBe(false)
  })

  it('refuses a name whose DNS answer is private, and passes it when allowed', async () => {
    const lookup = (allow: boolean) => new Promise<{ error: Error | null, address: unknown }>((resolve) => {
      guardedLookup(allow)('localhost', {}, (error, address) => resolve({ error, address }))
    })
    const refused = await lookup(false)
    expect(refused.error?.message).toMatch(/private address/)
    const allowed = await lookup(true)
    expect(allowed.error).toBeNull()
    expect(String(allowed.address)).toMatch(/^(127\.0\.0\.1|::1)$/)
  })
})

describe('privateNetworksAllowed', () => {
  it('allows private webhook addresses by default in development only', () => {
    expect(privateNetworksAllowed('', true)).toBe(true)
    expect(privateNetworksAllowed('', false)).toBe(false)
  })

  it('follows WEBHOOK_ALLOW_PRIVATE_NETWORKS when it is set, in development and in production', () => {
    for (const isDevelopment of [true, false]) {
      expect(privateNetworksAllowed('true', isDevelopment)).toBe(true)
      expect(privateNetworksAllowed('false', isDevelopment)).toBe(false)
    }
  })
})
