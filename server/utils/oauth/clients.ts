import { request as httpsRequest } from 'node:https'
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js'
import { InvalidClientMetadataError } from '@modelcontextprotocol/sdk/server/auth/errors.js'
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js'
import { z } from 'zod'
import { guardedLookup, isPrivateLiteral, privateNetworksAllowed, webhookUrlProblem } from '../http/url-guard'
import { redirectUriProblem } from './redirect-uris'
import { setting } from '../settings'
import { useDb } from '../db/database'

/** A Client ID Metadata Document is at most this long. */
const maxDocumentBytes = 5 * 1024
/** A fetched document is used again for this long before it is fetched anew. */
const documentTtlMs = 60 * 60 * 1000
const fetchTimeoutMs = 5_000

interface ClientRow {
  client_id: string
  client_name: string
  redirect_uris: string[]
  kind: 'registered' | 'metadata_document'
  fetched_at: Date | string
  created_at: Date | string
}

/** Why a client can not be used, for the consent page (never sent to its redirect URI). */
export class ClientProblem extends Error {}

const allowPrivate = () => privateNetworksAllowed(setting('webhookAllowPrivateNetworks'), import.meta.dev)

/** Whether a client_id is a Client ID Metadata Document URL (an https URL with a path). */
export function isMetadataDocumentId(clientId: string): boolean {
  return /^https:\/\//i.test(clientId)
}

const DocumentSchema = z.object({
  client_id: z.string(),
  client_name: z.string().trim().min(1).max(200),
  redirect_uris: z.array(z.string().max(2000)).min(1).max(20),
  token_endpoint_auth_method: z.string().optional(),
})

/** GETs the document through the SSRF guard: no private address, https, at most 5 KiB, no redirects. */
function fetchDocument(url: URL): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      lookup: guardedLookup(allowPrivate()),
      timeout: fetchTimeoutMs,
    }, (response) => {
      if (response.statusCode !== 200) {
        response.resume()
        return reject(new ClientProblem(`The client's metadata document answered ${response.statusCode} (it must answer 200 with JSON)`))
      }
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > maxDocumentBytes) {
          request.destroy()
          return reject(new ClientProblem('The client\'s metadata document is larger than 5 KiB'))
        }
        chunks.push(chunk)
      })
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
      response.on('error', reject)
    })
    request.on('timeout', () => request.destroy(new ClientProblem('The client\'s metadata document did not arrive within 5 seconds')))
    request.on('error', error => reject(error instanceof ClientProblem ? error : new ClientProblem(`The client's metadata document could not be fetched: ${error.message}`)))
    request.end()
  })
}

/** Fetches, checks and caches (in oauth_clients) the metadata document that a client_id URL names. */
async function loadMetadataDocument(clientId: string): Promise<ClientRow> {
  let url: URL
  try {
    url = new URL(clientId)
  }
  catch {
    throw new ClientProblem('The client_id is not a valid URL')
  }
  if (url.protocol !== 'https:' || url.pathname === '/' || url.hash || url.username || url.password) {
    throw new ClientProblem('A client_id URL must be https with a path, and no fragment or credentials')
  }
  const problem = await webhookUrlProblem(clientId, allowPrivate())
  if (problem || isPrivateLiteral(url, allowPrivate())) throw new ClientProblem(`The client_id URL ${problem ?? 'must not point at a private, loopback or link-local address'}`)
  let document: z.infer<typeof DocumentSchema>
  try {
    const parsed = DocumentSchema.safeParse(JSON.parse(await fetchDocument(url)))
    if (!parsed.success) throw new ClientProblem('The client\'s metadata document must give client_id, client_name and redirect_uris')
    document = parsed.data
  }
  catch (error) {
    if (error instanceof ClientProblem) throw error
    throw new ClientProblem('The client\'s metadata document is not JSON')
  }
  if (document.client_id !== clientId) throw new ClientProblem('The client\'s metadata document names another client_id than its own URL')
  const badUri = document.redirect_uris.map(redirectUriProblem).find(Boolean)
  if (badUri) throw new ClientProblem(`The client's metadata document lists a redirect URI that is not allowed: ${badUri}`)
  const db = await useDb()
  const { rows } = await db.query<ClientRow>(
    `insert into public.oauth_clients (client_id, client_name, redirect_uris, kind, metadata)
     values ($1, $2, $3, 'metadata_document', $4)
     on conflict (client_id) do update set client_name = excluded.client_name, redirect_uris = excluded.redirect_uris,
       metadata = excluded.metadata, fetched_at = now()
     returning *`,
    [clientId, document.client_name, document.redirect_uris, JSON.stringify(document)],
  )
  return rows[0]!
}

/** The client of this id: registered, or its metadata document (from the cache when fresh); null when unknown. */
export async function findClient(clientId: string): Promise<ClientRow | null> {
  if (clientId.length > 2048) return null
  const db = await useDb()
  const { rows } = await db.query<ClientRow>('select * from public.oauth_clients where client_id = $1', [clientId])
  const row = rows[0]
  if (!isMetadataDocumentId(clientId)) return row ?? null
  if (row && Date.now() - new Date(row.fetched_at).getTime() < documentTtlMs) return row
  return loadMetadataDocument(clientId)
}

function clientInformation(row: ClientRow): OAuthClientInformationFull {
  return {
    client_id: row.client_id,
    client_name: row.client_name,
    redirect_uris: row.redirect_uris,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    client_id_issued_at: Math.floor(new Date(row.created_at).getTime() / 1000),
  }
}

/**
 * The clients as the SDK's handlers read them. Registration keeps public clients only (no secret:
 * PKCE is their proof), with redirect URIs checked by redirectUriProblem.
 */
export const clientsStore: OAuthRegisteredClientsStore = {
  async getClient(clientId) {
    try {
      const row = await findClient(clientId)
      return row ? clientInformation(row) : undefined
    }
    catch (error) {
      if (error instanceof ClientProblem) return undefined
      throw error
    }
  },
  async registerClient(client) {
    const problem = client.redirect_uris.map(redirectUriProblem).find(Boolean)
    if (problem) throw new InvalidClientMetadataError(problem)
    if (!client.redirect_uris.length) throw new InvalidClientMetadataError('redirect_uris must list at least one URI')
    if (client.redirect_uris.length > 20) throw new InvalidClientMetadataError('redirect_uris may list at most 20 URIs')
    const name = (client.client_name ?? '').trim().slice(0, 200) || 'Unnamed client'
    // the SDK's handler has set a new client_id (a UUID) before it calls this
    const clientId = (client as { client_id?: string }).client_id ?? crypto.randomUUID()
    const db = await useDb()
    const { rows } = await db.query<ClientRow>(
      `insert into public.oauth_clients (client_id, client_name, redirect_uris, kind, metadata)
       values ($1, $2, $3, 'registered', $4) returning *`,
      [clientId, name, client.redirect_uris, JSON.stringify({ ...client, client_secret: undefined })],
    )
    return { ...client, ...clientInformation(rows[0]!), client_secret: undefined, client_secret_expires_at: undefined }
  },
}
