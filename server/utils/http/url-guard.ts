import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { BlockList, isIP, type LookupFunction } from 'node:net'

// Addresses a webhook may not reach unless private networks are allowed: this host, the local
// networks, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, multicast, reserved.
const privateRanges = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) privateRanges.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) privateRanges.addSubnet(network, prefix, 'ipv6')

/**
 * Whether webhooks may reach private, loopback and link-local addresses: as WEBHOOK_ALLOW_PRIVATE_NETWORKS
 * says ('true' or 'false'), and when it is not set only in development (npm run dev), where the
 * receiver is usually on the same machine. A production build refuses them unless told otherwise.
 */
export function privateNetworksAllowed(configured: string, isDevelopment: boolean): boolean {
  if (configured === 'true') return true
  if (configured === 'false') return false
  return isDevelopment
}

/** Whether an IP address is loopback, private, link-local or otherwise not on the public internet (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  return privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

function hostOf(url: URL): string {
  // URL keeps the brackets of an IPv6 literal
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase()
}

function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')
}

function lookupAll(host: string, timeoutMs: number): Promise<LookupAddress[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve([]), timeoutMs)
    dnsLookup(host, { all: true }, (error, addresses) => {
      clearTimeout(timer)
      resolve(error ? [] : addresses)
    })
  })
}

/**
 * Why a webhook URL may not be used, or null when it may: a private address literal, a local host
 * name, or a name whose DNS answers include a private address. A name that does not resolve now is
 * accepted (connect time checks again).
 */
export async function webhookUrlProblem(value: string, allowPrivate: boolean): Promise<string | null> {
  let url: URL
  try {
    url = new URL(value)
  }
  catch {
    return 'must be an http or https URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL'
  if (allowPrivate) return null
  const refusal = 'must not point at a private, loopback or link-local address'
  const host = hostOf(url)
  if (isIP(host)) return isPrivateAddress(host) ? refusal : null
  if (isLocalName(host)) return refusal
  const addresses = await lookupAll(host, 3000)
  return addresses.some(answer => isPrivateAddress(answer.address)) ? refusal : null
}

/** How the guard resolves names and which answers it refuses (both replaceable in tests). */
export interface GuardOptions {
  resolve?: typeof dnsLookup
  isRefused?: (address: string) => boolean
}

/**
 * A `lookup` for http.request and agents that refuses private answers (the connect-time half of
 * the guard: a name may resolve differently than when it was saved). IP literals never reach a
 * lookup, so the caller checks those with isPrivateAddress first.
 */
export function guardedLookup(allowPrivate: boolean, { resolve = dnsLookup, isRefused = isPrivateAddress }: GuardOptions = {}): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0)
      const refused = !allowPrivate && addresses.find(answer => isRefused(answer.address))
      if (refused) {
        const blocked = Object.assign(new Error(`${hostname} resolves to a private address (${refused.address})`), { code: 'EPRIVATEADDRESS' })
        return callback(blocked, '', 0)
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses)
      const first = addresses[0]!
      callback(null, first.address, first.family)
    })
  }
}

/** The keep-alive agents webhooks are sent through, one per scheme. */
export interface GuardedAgents {
  http: HttpAgent
  https: HttpsAgent
}

/**
 * Agents that keep connections to each receiver (host and port) alive for the next delivery and
 * run the guard's lookup for every connection they open: a kept connection is only ever to an
 * address the guard passed, and its successor is looked up and checked again, so a DNS change
 * cannot move it onto a private address. An idle connection is closed after `idleMs`.
 */
export function guardedAgents(allowPrivate: boolean, { idleMs = 30_000, ...guard }: GuardOptions & { idleMs?: number } = {}): GuardedAgents {
  // an agent's own options override the request's when it opens a connection
  const options = { keepAlive: true, timeout: idleMs, scheduling: 'lifo' as const, lookup: guardedLookup(allowPrivate, guard) }
  return { http: new HttpAgent(options), https: new HttpsAgent(options) }
}

/** Whether a URL's host is an IP literal that the guard refuses. */
export function isPrivateLiteral(value: URL, allowPrivate: boolean): boolean {
  const host = hostOf(value)
  return !allowPrivate && (isLocalName(host) || (isIP(host) !== 0 && isPrivateAddress(host)))
}
