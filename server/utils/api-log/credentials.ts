// The team of a credential that a refused request sent, for requests refused before the app read
// their credential (a body too large, a method the path does not take, headers too large): a team
// API key (known to this instance, or by its hash) or an OAuth access token (by its hash). Revoked
// and expired ones are found too: their requests are their team's as well.
import { hashApiKey } from '../credentials/api-keys'
import { knownCredentialOf } from '../credentials/principal'
import { useDb } from '../db/database'
import { accessTokenPrefix, hashSecret } from '../oauth/config'
import type { ApiLogCredential } from './recorder'

export async function credentialOfToken(token: string): Promise<ApiLogCredential | undefined> {
  const db = await useDb()
  if (token.startsWith(accessTokenPrefix)) {
    const { rows } = await db.query<{ team_id: string, grant_id: string }>(
      `select g.team_id, g.id as grant_id from public.oauth_tokens t join public.oauth_grants g on g.id = t.grant_id
       where t.token_hash = $1 and t.kind = 'access'`,
      [hashSecret(token)],
    )
    return rows[0] && { teamId: rows[0].team_id, grantId: rows[0].grant_id }
  }
  const hash = hashApiKey(token)
  const known = knownCredentialOf('key', hash)
  if (known) return { teamId: known.team_id, apiKeyId: known.id }
  const { rows } = await db.query<{ id: string, team_id: string }>('select id, team_id from public.api_keys where key_hash = $1', [hash])
  return rows[0] && { teamId: rows[0].team_id, apiKeyId: rows[0].id }
}
