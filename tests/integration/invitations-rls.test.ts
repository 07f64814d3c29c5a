import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../server/utils/db/db-drivers'
import { ensureWebhookSecret, fireWebhook } from '../../server/utils/webhooks/webhooks'
import { asUser, freshDatabase, makeUser } from '../support/database'

// Row-level security of the invitation and webhook tables, as Supabase's `authenticated` role.
let db: Database
let close: () => Promise<void>
let teamId: string
const users: Record<'owner' | 'admin' | 'member' | 'outsider', string> = { owner: '', admin: '', member: '', outsider: '' }

beforeAll(async () => {
  ({ db, close } = await freshDatabase())
  for (const role of Object.keys(users) as (keyof typeof users)[]) users[role] = await makeUser(db, `rls-${role}`)
  const { rows } = await db.query<{ id: string }>(`insert into public.teams (name, webhook_url) values ('RLS team', 'https://hooks.example.com/in') returning id`)
  teamId = rows[0]!.id
  for (const role of ['owner', 'admin', 'member'] as const) {
    await db.query('insert into public.team_members (team_id, user_id, role) values ($1, $2, $3)', [teamId, users[role], role])
  }
  await ensureWebhookSecret(db, teamId)
  await db.transaction(async (tx) => {
    await tx.query(
      `insert into public.invitations (team_id, email, role, token_hash, token_encrypted, invited_by)
       values ($1, 'guest@example.com', 'member', $2, 'sealed', $3)`,
      [teamId, 'a'.repeat(64), users.owner],
    )
    const deliveryId = await fireWebhook(tx, teamId, 'webhook.test', {})
    await tx.query(`insert into public.webhook_attempts (delivery_id, team_id, attempt, url, status_code, duration_ms) values ($1, $2, 1, 'https://hooks.example.com/in', 200, 5)`, [deliveryId, teamId])
  })
})
afterAll(() => close?.())

const tables = ['invitations', 'webhook_secrets', 'webhook_deliveries', 'webhook_attempts'] as const

async function visibleCounts(userId: string) {
  return asUser(db, userId, async (tx) => {
    const counts: Record<string, number> = {}
    for (const table of tables) {
      const column = table === 'webhook_secrets' ? 'team_id' : 'id'
      counts[table] = (await tx.query(`select ${column} from public.${table}`)).rowCount
    }
    return counts
  })
}

describe('row-level security of invitations and webhooks', () => {
  it('shows owners and admins their team\'s rows and members and outsiders none', async () => {
    const all = { invitations: 1, webhook_secrets: 1, webhook_deliveries: 1, webhook_attempts: 1 }
    const none = { invitations: 0, webhook_secrets: 0, webhook_deliveries: 0, webhook_attempts: 0 }
    expect(await visibleCounts(users.owner)).toEqual(all)
    expect(await visibleCounts(users.admin)).toEqual(all)
    expect(await visibleCounts(users.member)).toEqual(none)
    expect(await visibleCounts(users.outsider)).toEqual(none)
  })

  it('never lets the token columns be read, even by an owner', async () => {
    await expect(asUser(db, users.owner, tx => tx.query('select token_hash from public.invitations'))).rejects.toThrow(/permission denied/)
    await expect(asUser(db, users.owner, tx => tx.query('select token_encrypted from public.invitations'))).rejects.toThrow(/permission denied/)
    const { rows } = await asUser(db, users.owner, tx => tx.query<{ email: string }>('select email from public.invitations'))
    expect(rows).toEqual([{ email: 'guest@example.com' }])
  })

  it('gives the authenticated role no way to write', async () => {
    await expect(asUser(db, users.owner, tx => tx.query(`update public.invitations set role = 'admin'`))).rejects.toThrow(/permission denied/)
    await expect(asUser(db, users.owner, tx => tx.query(`delete from public.webhook_deliveries`))).rejects.toThrow(/permission denied/)
    await expect(asUser(db, users.owner, tx => tx.query(`update public.webhook_secrets set secret = 'whsec_AAAA'`))).rejects.toThrow(/permission denied/)
  })

  it('keeps one open invitation per team and e-mail, and stores e-mails in lower case', async () => {
    const insert = (email: string, hash: string) => db.query(
      `insert into public.invitations (team_id, email, role, token_hash, token_encrypted) values ($1, $2, 'member', $3, 'sealed')`,
      [teamId, email, hash],
    )
    await expect(insert('guest@example.com', 'b'.repeat(64))).rejects.toThrow(/invitations_open_email_key/)
    await expect(insert('Other@example.com', 'c'.repeat(64))).rejects.toThrow(/check/)
  })
})
