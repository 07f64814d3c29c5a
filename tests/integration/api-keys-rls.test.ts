import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../server/utils/db/db-drivers'
import { asUser, freshDatabase, makeUser } from '../support/database'

// Row-level security of api_keys and the example domain tables, as Supabase's `authenticated` role.
let db: Database
let close: () => Promise<void>
const users: Record<'owner' | 'member' | 'outsider', string> = { owner: '', member: '', outsider: '' }
const teams: Record<'mine' | 'other', string> = { mine: '', other: '' }
const domainTables = ['projects', 'tasks', 'notes'] as const

async function seedTeam(name: string, ownerId: string) {
  const { rows } = await db.query<{ id: string }>('insert into public.teams (name) values ($1) returning id', [name])
  const teamId = rows[0]!.id
  await db.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'owner')`, [teamId, ownerId])
  await db.query(
    `insert into public.api_keys (team_id, created_by, name, key_prefix, key_hash) values ($1, $2, 'k', 'abcdefgh', $3)`,
    [teamId, ownerId, (name === 'Mine' ? 'a' : 'b').repeat(64)],
  )
  const project = await db.query<{ id: string }>(`insert into public.projects (team_id, created_by, name) values ($1, $2, 'p') returning id`, [teamId, ownerId])
  await db.query(`insert into public.tasks (team_id, created_by, title, project_id) values ($1, $2, 't', $3)`, [teamId, ownerId, project.rows[0]!.id])
  await db.query(`insert into public.notes (team_id, created_by, title) values ($1, $2, 'n')`, [teamId, ownerId])
  return teamId
}

beforeAll(async () => {
  ({ db, close } = await freshDatabase())
  for (const who of Object.keys(users) as (keyof typeof users)[]) users[who] = await makeUser(db, `keys-rls-${who}`)
  teams.mine = await seedTeam('Mine', users.owner)
  teams.other = await seedTeam('Other', users.outsider)
  await db.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'member')`, [teams.mine, users.member])
})
afterAll(() => close?.())

describe('row-level security of api_keys and the domain tables', () => {
  it('shows a member only their own team\'s keys and records', async () => {
    for (const userId of [users.owner, users.member]) {
      const seen = await asUser(db, userId, async (tx) => {
        const keys = await tx.query<{ team_id: string }>('select team_id from public.api_keys')
        const records = await Promise.all(domainTables.map(table => tx.query<{ team_id: string }>(`select team_id from public.${table}`)))
        return [keys, ...records].map(result => result.rows.map(row => row.team_id))
      })
      expect(seen).toEqual([[teams.mine], [teams.mine], [teams.mine], [teams.mine]])
    }
  })

  it('never lets key_hash be read, even by an owner', async () => {
    await expect(asUser(db, users.owner, tx => tx.query('select key_hash from public.api_keys'))).rejects.toThrow(/permission denied/)
    await expect(asUser(db, users.owner, tx => tx.query('select * from public.api_keys'))).rejects.toThrow(/permission denied/)
    const { rows } = await asUser(db, users.owner, tx => tx.query('select name, key_prefix from public.api_keys'))
    expect(rows).toEqual([{ name: 'k', key_prefix: 'abcdefgh' }])
  })

  it('gives the authenticated role no way to write', async () => {
    const attempts = [
      `update public.api_keys set revoked_at = now()`,
      `delete from public.api_keys`,
      `insert into public.api_keys (team_id, created_by, name, key_prefix, key_hash) values ('${teams.mine}', '${users.owner}', 'x', 'abcdefgh', '${'c'.repeat(64)}')`,
      ...domainTables.map(table => `delete from public.${table}`),
      `update public.tasks set title = 'changed'`,
      `insert into public.notes (team_id, created_by, title) values ('${teams.mine}', '${users.owner}', 'x')`,
    ]
    for (const sql of attempts) {
      await expect(asUser(db, users.owner, tx => tx.query(sql))).rejects.toThrow(/permission denied/)
    }
  })

  it('keeps key hashes unique', async () => {
    await expect(db.query(
      `insert into public.api_keys (team_id, created_by, name, key_prefix, key_hash) values ($1, $2, 'dup', 'abcdefgh', $3)`,
      [teams.mine, users.owner, 'a'.repeat(64)],
    )).rejects.toThrow(/api_keys_key_hash_key/)
  })

  it('enforces the example domain\'s CHECKs', async () => {
    const insertTask = (fields: string, values: string) =>
      db.query(`insert into public.tasks (team_id, created_by, title${fields}) values ($1, $2, 'x'${values})`, [teams.mine, users.owner])
    await expect(insertTask(', status', `, 'blocked'`)).rejects.toThrow(/tasks_status_check/)
    await expect(insertTask(', priority', ', 0')).rejects.toThrow(/tasks_priority_check/)
    await expect(insertTask(', status', `, 'done'`)).rejects.toThrow(/tasks_done_has_completed_at/)
    await expect(insertTask(', status, completed_at', `, 'done', now()`)).resolves.toBeTruthy()
  })
})
