import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../server/utils/db/db-drivers'
import { createAuditedClient } from '../../server/utils/db/audited-client'
import { ChangedMigrationError, runMigrations } from '../../server/utils/db/migrations'
import { loadMigrationFiles } from '../../scripts/load-migrations'
import { asUser, freshDatabase, makeUser } from '../support/database'

let db: Database
let close: () => Promise<void>
beforeAll(async () => {
  ({ db, close } = await freshDatabase())
})
afterAll(() => close?.())

async function makeTeam(name: string, ownerId: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>('insert into public.teams (name) values ($1) returning id', [name])
  await db.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'owner')`, [rows[0]!.id, ownerId])
  return rows[0]!.id
}

describe('row-level security as the authenticated role', () => {
  it('shows a member the rows of their teams and none of another team', async () => {
    const ann = await makeUser(db, 'ann')
    const bob = await makeUser(db, 'bob')
    const annTeam = await makeTeam('Ann team', ann)
    const bobTeam = await makeTeam('Bob team', bob)
    const seen = await asUser(db, ann, async tx => ({
      teams: (await tx.query<{ id: string }>('select id from public.teams')).rows.map(r => r.id),
      members: (await tx.query<{ team_id: string }>('select team_id from public.team_members')).rows.map(r => r.team_id),
      profiles: (await tx.query<{ id: string }>('select id from public.profiles')).rows.map(r => r.id),
      activity: (await tx.query<{ team_id: string }>('select distinct team_id from public.activity_log')).rows.map(r => r.team_id),
    }))
    expect(seen.teams).toEqual([annTeam])
    expect(seen.members).toEqual([annTeam])
    expect(seen.profiles).toEqual([ann])
    expect(seen.activity).toEqual([annTeam])
    expect(seen.teams).not.toContain(bobTeam)
    // login rate limits are not readable at all
    await expect(asUser(db, ann, tx => tx.query('select * from public.rate_limits'))).rejects.toThrow(/permission denied/)
  })

  it('hides activity from plain members and shows it to admins', async () => {
    const owner = await makeUser(db, 'olga')
    const member = await makeUser(db, 'mike')
    const team = await makeTeam('Olga team', owner)
    await db.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'member')`, [team, member])
    expect(await asUser(db, member, async tx => (await tx.query('select 1 from public.activity_log')).rowCount)).toBe(0)
    expect(await asUser(db, owner, async tx => (await tx.query('select 1 from public.activity_log')).rowCount)).toBeGreaterThan(0)
    // members see their teammates' profiles
    const profiles = await asUser(db, member, async tx => (await tx.query<{ id: string }>('select id from public.profiles order by name')).rows.map(r => r.id))
    expect(profiles.sort()).toEqual([owner, member].sort())
  })

  it('gives the authenticated role no way to write', async () => {
    const ann = await makeUser(db, 'writer')
    const team = await makeTeam('Write team', ann)
    await expect(asUser(db, ann, tx => tx.query(`update public.teams set name = 'x' where id = $1`, [team]))).rejects.toThrow(/permission denied/)
    await expect(asUser(db, ann, tx => tx.query(`insert into public.activity_log (team_id, source, table_name, action) values ($1, 'web', 'teams', 'insert')`, [team]))).rejects.toThrow(/permission denied/)
  })
})

describe('audited client', () => {
  it('attributes a write to the actor, team, source and source_ref in the same transaction', async () => {
    const ann = await makeUser(db, 'audit')
    const team = await makeTeam('Audit team', ann)
    const client = createAuditedClient(db, { actorId: ann, teamId: team, source: 'chat', sourceRef: 'chat-123' })
    await client.query('update public.teams set name = $2 where id = $1', [team, 'Audited'])
    const { rows } = await db.query(`select actor_id, source, source_ref, old_data, new_data->>'name' as name from public.activity_log where record_id = $1 and action = 'update'`, [team])
    expect(rows).toEqual([{ actor_id: ann, source: 'chat', source_ref: 'chat-123', old_data: { name: 'Audit team' }, name: 'Audited' }])
  })

  it('rolls the log entry back with a failed transaction', async () => {
    const ann = await makeUser(db, 'rollback')
    const team = await makeTeam('Rollback team', ann)
    const client = createAuditedClient(db, { actorId: ann, teamId: team, source: 'web' })
    await expect(client.transaction(async (tx) => {
      await tx.query('update public.teams set name = $2 where id = $1', [team, 'Doomed'])
      await tx.query('select 1/0')
    })).rejects.toThrow()
    const { rows } = await db.query(`select count(*)::int as n from public.activity_log where record_id = $1 and action = 'update'`, [team])
    expect(rows[0]!.n).toBe(0)
    expect((await db.query<{ name: string }>('select name from public.teams where id = $1', [team])).rows[0]!.name).toBe('Rollback team')
  })

  it('writes in one statement with the context set inside it, which does not outlive the statement', async () => {
    const ann = await makeUser(db, 'single')
    const team = await makeTeam('Single team', ann)
    const client = createAuditedClient(db, { actorId: ann, teamId: team, source: 'api', apiKeyId: null })
    const { rows } = await client.write<{ name: string }>('with changed as (update public.teams set name = $2 from audit_context where id = $1 returning name) select name from changed', [team, 'One trip'])
    expect(rows).toEqual([{ name: 'One trip' }])
    const entry = await db.query(`select actor_id, source from public.activity_log where record_id = $1 and action = 'update'`, [team])
    expect(entry.rows).toEqual([{ actor_id: ann, source: 'api' }])
    // the next statement on the database runs without it
    expect((await db.query<{ actor: string | null }>(`select nullif(current_setting('app.actor_id', true), '') as actor`)).rows[0]!.actor).toBeNull()
    expect(() => client.write('update public.teams set name = $2 where id = $1', [team, 'x'])).toThrow(/audit_context/)
  })

  it('keeps answering a prepared statement after a migration changes its table', async () => {
    const ann = await makeUser(db, 'prepared')
    const team = await makeTeam('Prepared team', ann)
    const client = createAuditedClient(db, { actorId: ann, teamId: team, source: 'web' })
    const read = () => client.read<Record<string, unknown>>('select * from public.teams where id = $1', [team])
    for (let i = 0; i < 3; i++) expect((await read()).rows[0]!.name).toBe('Prepared team')
    await db.exec('alter table public.teams add column prepared_probe text')
    try {
      const after = await read()
      expect(after.rows[0]).toHaveProperty('prepared_probe', null)
    }
    finally {
      await db.exec('alter table public.teams drop column prepared_probe')
    }
  })

  it('logs source system when no context is set', async () => {
    const ann = await makeUser(db, 'system')
    const team = await makeTeam('System team', ann)
    const { rows } = await db.query(`select source, actor_id from public.activity_log where record_id = $1`, [team])
    expect(rows).toEqual([{ source: 'system', actor_id: null }])
  })
})

describe('statements that ride with the next one', () => {
  it('answers riders and the statement they ride with, each with its own result, the riders first', async () => {
    const order: string[] = []
    const sent: number[] = []
    const riders = [1, 2, 3].map(n => db.ride<{ n: number }>('select $1::int as n', [n], () => sent.push(n)).then((result) => {
      order.push(`rider ${n}`)
      return result.rows[0]!.n
    }))
    // a slow statement does not hold up the riders written before it
    const slow = db.query<{ done: string }>(`select 'slept' as done from pg_sleep(0.2)`).then((result) => {
      order.push('statement')
      return result.rows[0]!.done
    })
    expect(await Promise.all(riders)).toEqual([1, 2, 3])
    expect(await slow).toBe('slept')
    expect(sent).toEqual([1, 2, 3])
    expect(order).toEqual(['rider 1', 'rider 2', 'rider 3', 'statement'])
  })

  it('reads what was committed before the statement it rides with, not that statement\'s write', async () => {
    const name = `Rider team ${Date.now()}`
    const before = db.ride<{ n: number }>('select count(*)::int as n from public.teams where name = $1', [name])
    await db.query('insert into public.teams (name) values ($1)', [name])
    expect((await before).rows[0]!.n).toBe(0)
    expect((await db.query<{ n: number }>('select count(*)::int as n from public.teams where name = $1', [name])).rows[0]!.n).toBe(1)
  })

  it('is sent alone when no statement follows in the same turn', async () => {
    let isSent = false
    const alone = db.ride<{ n: number }>('select 7 as n', [], () => {
      isSent = true
    })
    expect((await alone).rows[0]!.n).toBe(7)
    expect(isSent).toBe(true)
  })

  it('keeps a failure to its own statement, and the connection usable afterwards', async () => {
    const rider = db.ride<{ n: number }>('select 5 as n', [])
    await expect(db.query('select 1 / 0')).rejects.toThrow(/division by zero/)
    expect((await rider).rows[0]!.n).toBe(5)
    // its failure is expected as soon as it is made: it may come before the statement's answer
    const failing = expect(db.ride('select 1 / 0', [])).rejects.toThrow(/division by zero/)
    expect((await db.query<{ n: number }>('select 6 as n')).rows[0]!.n).toBe(6)
    await failing
    // each connection a ride took goes back to the pool: more rides, one after another, than the
    // pool has connections are all answered, and none is left checked out
    for (let i = 0; i < 12; i++) {
      const ridden = db.ride<{ n: number }>('select $1::int as n', [i])
      expect((await db.query<{ n: number }>('select $1::int + 100 as n', [i])).rows[0]!.n).toBe(i + 100)
      expect((await ridden).rows[0]!.n).toBe(i)
    }
    // (a connection is released once every statement of its write has answered: a turn of the event loop)
    await new Promise(resolve => setImmediate(resolve))
    const use = db.poolUse?.()
    if (use) expect(use.idle).toBe(use.total)
    // and a transaction on them still rolls back
    const name = `Rolled back ${Date.now()}`
    await expect(db.transaction(async (tx) => {
      await tx.query('insert into public.teams (name) values ($1)', [name])
      throw new Error('undo')
    })).rejects.toThrow('undo')
    expect((await db.query('select 1 from public.teams where name = $1', [name])).rowCount).toBe(0)
  })
})

describe('migrations', () => {
  it('applies nothing the second time', async () => {
    expect(await runMigrations(db, loadMigrationFiles())).toEqual([])
  })

  it('refuses to run when an applied migration has changed', async () => {
    const migrations = loadMigrationFiles()
    migrations[0] = { ...migrations[0]!, sql: `${migrations[0]!.sql}\n-- edited` }
    await expect(runMigrations(db, migrations)).rejects.toBeInstanceOf(ChangedMigrationError)
  })
})
